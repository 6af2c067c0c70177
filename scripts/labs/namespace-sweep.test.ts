import { describe, expect, it } from 'vitest';
import { CommandError, type CommandResult } from '../base/exec.ts';
import type { ClusterHandle } from '../clusters/handle.ts';
import { emptyNamespace, sweepOrder } from './namespace-sweep.ts';

/** What `kubectl api-resources --namespaced=true --verbs=list,delete -o name` printed on a kind cluster with Cilium (v1.35.0), abridged. */
const KIND_KINDS = [
  'configmaps',
  'endpoints',
  'events',
  'limitranges',
  'persistentvolumeclaims',
  'pods',
  'podtemplates',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'serviceaccounts',
  'services',
  'controllerrevisions.apps',
  'daemonsets.apps',
  'deployments.apps',
  'replicasets.apps',
  'statefulsets.apps',
  'cronjobs.batch',
  'jobs.batch',
  'ciliumnetworkpolicies.cilium.io',
  'endpointslices.discovery.k8s.io',
  'events.events.k8s.io',
  'networkpolicies.networking.k8s.io',
  'roles.rbac.authorization.k8s.io',
];

const result = (args: readonly string[], stdout = '', stderr = '', exitCode = 0): CommandResult => ({
  command: `kubectl ${args.join(' ')}`,
  file: 'kubectl',
  args,
  exitCode,
  stdout,
  stderr,
  durationMs: 1,
});

/** A cluster whose kubectl answers api-resources with `kinds()` and records every call. */
function fakeCluster(name: string, kinds: () => string[], refuse?: (kindsArg: string) => string | undefined) {
  const calls: string[][] = [];
  const cluster = {
    mode: 'iptables',
    name,
    kubeconfig: `/tmp/${name}.kubeconfig`,
    kubectl: async (args: readonly string[]) => {
      calls.push([...args]);
      if (args[0] === 'api-resources') return result(args, kinds().join('\n') + '\n');
      const refused = refuse?.(args[1]);
      if (refused) throw new CommandError('failed', result(args, '', refused, 1), 'kubectl failed');
      return result(args, 'deleted\n');
    },
  } as unknown as ClusterHandle;
  return { cluster, calls };
}

describe('emptying a lab namespace in place', () => {
  it('deletes the controllers, then the pods, then the rest; never events', () => {
    const order = sweepOrder(KIND_KINDS);
    const before = (a: string, b: string) => order.indexOf(a) < order.indexOf(b);
    // Every kind that makes pods comes before the pods, an owner before what it owns.
    const owners = order.slice(0, order.indexOf('pods'));
    expect(owners.sort()).toEqual([
      'cronjobs.batch',
      'daemonsets.apps',
      'deployments.apps',
      'jobs.batch',
      'replicasets.apps',
      'replicationcontrollers',
      'statefulsets.apps',
    ]);
    expect(before('deployments.apps', 'replicasets.apps') && before('cronjobs.batch', 'jobs.batch')).toBe(true);
    expect(order).not.toContain('events');
    expect(order).not.toContain('events.events.k8s.io');
    expect(order).toContain('ciliumnetworkpolicies.cilium.io');
    expect(new Set(order).size).toBe(order.length);
    expect(order).toHaveLength(KIND_KINDS.length - 2);
  });

  it('one delete of every kind, at once, keeping what every namespace needs; the kinds asked once per cluster', async () => {
    const { cluster, calls } = fakeCluster('dplab-sweep-a', () => KIND_KINDS);
    await emptyNamespace(cluster, 'lab-x', {});
    await emptyNamespace(cluster, 'lab-y', {});
    expect(calls.filter((c) => c[0] === 'api-resources')).toHaveLength(1);
    const deletes = calls.filter((c) => c[0] === 'delete');
    expect(deletes).toHaveLength(2);
    const [, kinds, ...flags] = deletes[0];
    expect(kinds.split(',')).toEqual(sweepOrder(KIND_KINDS));
    expect(flags).toEqual([
      '-n',
      'lab-x',
      '--ignore-not-found',
      '--field-selector=metadata.name!=default,metadata.name!=kube-root-ca.crt',
      '--grace-period=0',
      '--force',
      '--wait=false',
    ]);
  });

  it('asks for the kinds again when one has gone from the cluster since, and deletes once more', async () => {
    let served = [...KIND_KINDS];
    const { cluster, calls } = fakeCluster(
      'dplab-sweep-b',
      () => served,
      (kindsArg) =>
        kindsArg.split(',').some((k) => !served.includes(k))
          ? `error: the server doesn't have a resource type "${kindsArg.split(',').find((k) => !served.includes(k))}"`
          : undefined,
    );
    await emptyNamespace(cluster, 'lab-x', {});
    // Cilium's CRDs went (the cluster was made again in another mode under the same name).
    served = served.filter((k) => !k.includes('cilium'));
    await emptyNamespace(cluster, 'lab-x', {});
    expect(calls.map((c) => c[0])).toEqual(['api-resources', 'delete', 'delete', 'api-resources', 'delete']);
    expect(calls[2][1]).toContain('ciliumnetworkpolicies.cilium.io');
    expect(calls[4][1]).not.toContain('cilium');
  });

  it('passes any other failure on, without a second try', async () => {
    const { cluster, calls } = fakeCluster(
      'dplab-sweep-c',
      () => KIND_KINDS,
      () => 'Unable to connect to the server: dial tcp 127.0.0.1:6443: connect: connection refused',
    );
    await expect(emptyNamespace(cluster, 'lab-x', {})).rejects.toThrow(/kubectl failed/);
    expect(calls.filter((c) => c[0] === 'delete')).toHaveLength(1);
  });
});
