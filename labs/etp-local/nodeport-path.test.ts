// etp-local's NodePort-path checks against a stand-in cluster: which two nodes they read (the
// pods' node and one without), that on Cilium each is read in the agent on that node (the
// agents' tables differ under Local), and what they say when the rules are not there yet or the
// Service is not what the step reads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../scripts/clusters/handle.ts';
import type { Mode } from '../../scripts/catalogue/modes.ts';
import type { GatherContext } from '../../scripts/labs/checks/types.ts';
import { clusterPathCheck, localPathCheck, pickNodes, type NodePortPathObservation } from './nodeport-path.ts';

const NS = 'lab-etp-local';
const recorded = (file: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, 'observations', file), 'utf8')).observations as NodePortPathObservation;

/** A cluster that answers as the hand-written Cilium file says: pods, Service, each agent's table, the answer. */
function ciliumCluster(obs: NodePortPathObservation): { cluster: ClusterHandle; execs: string[] } {
  const execs: string[] = [];
  const dumps: Record<string, string> = {
    [obs.withPod!.node]: obs.withPod!.dump.stdout,
    [obs.withoutPod!.node]: obs.withoutPod!.dump.stdout,
  };
  const cluster = {
    mode: 'cilium',
    async nodes() {
      return ['dplab-cilium-control-plane', 'dplab-rec-cilium-worker', 'dplab-rec-cilium-worker2'];
    },
    async kubectlJson(args: readonly string[], schema: { parse(v: unknown): unknown }) {
      const line = args.join(' ');
      const onNode = /spec\.nodeName=(\S+)/.exec(line)?.[1];
      if (onNode) return schema.parse({ kind: 'List', items: [{ kind: 'Pod', metadata: { name: `cilium-${onNode.split('-').pop()}` } }] });
      if (line.includes('-l app=web')) return schema.parse(obs.pods);
      if (line.startsWith('get services')) return schema.parse(obs.withPod!.services);
      if (line.startsWith('get configmaps')) return schema.parse(obs.answer.configmaps);
      throw new Error(`unexpected kubectl ${line}`);
    },
    async kubectl(args: readonly string[]) {
      const line = args.join(' ');
      execs.push(line);
      const agent = /exec (cilium-\S+)/.exec(line)?.[1];
      const node = Object.keys(dumps).find((n) => `cilium-${n.split('-').pop()}` === agent);
      return { exitCode: 0, stdout: node ? dumps[node] : '', stderr: '', durationMs: 1 };
    },
  } as unknown as ClusterHandle;
  return { cluster, execs };
}

const ctx = (cluster: ClusterHandle, mode: Mode = 'cilium'): GatherContext => ({
  cluster,
  mode,
  namespace: NS,
  signal: new AbortController().signal,
});

describe('etp-local NodePort path checks', () => {
  it('read the node with the pods and a worker without (worker2 before the control plane)', () => {
    expect(pickNodes(['x-control-plane', 'x-worker', 'x-worker2'], ['x-worker'])).toEqual({ withPod: 'x-worker', withoutPod: 'x-worker2' });
    expect(pickNodes(['x-control-plane', 'x-worker', 'x-worker2'], ['x-worker2'])).toEqual({
      withPod: 'x-worker2',
      withoutPod: 'x-worker',
    });
    expect(pickNodes(['x-control-plane', 'x-worker'], ['x-worker'])).toEqual({ withPod: 'x-worker', withoutPod: 'x-control-plane' });
    expect(pickNodes(['x-worker'], ['x-worker']).withoutPod).toBeNull();
  });

  it('on Cilium, ask the agent on each of the two nodes, and pass on what they list', async () => {
    const obs = recorded('follow-nodeport.solved.cilium.kind.json');
    const { cluster, execs } = ciliumCluster(obs);
    const got = await localPathCheck.gather(ctx(cluster));
    expect(execs).toEqual([
      '-n kube-system exec cilium-worker -c cilium-agent -- cilium-dbg service list -o json',
      '-n kube-system exec cilium-worker2 -c cilium-agent -- cilium-dbg service list -o json',
    ]);
    expect([got.withPod?.node, got.withoutPod?.node]).toEqual(['dplab-rec-cilium-worker', 'dplab-rec-cilium-worker2']);
    expect(localPathCheck.evaluate(localPathCheck.observations.parse(got), ctx(cluster)).status).toBe('pass');
  });

  it('no agent on a node is an observation the check fails on, not an error', async () => {
    const obs = recorded('follow-nodeport.solved.cilium.kind.json');
    const { cluster } = ciliumCluster(obs);
    const base = cluster.kubectlJson.bind(cluster);
    cluster.kubectlJson = (async (args: readonly string[], schema: { parse(v: unknown): unknown }) =>
      args.join(' ').includes('spec.nodeName=dplab-rec-cilium-worker2')
        ? schema.parse({ kind: 'List', items: [] })
        : base(args, schema as never)) as never;
    const got = await localPathCheck.gather(ctx(cluster));
    expect(got.withoutPod?.dump).toMatchObject({ exitCode: 1, stderr: expect.stringContaining('no cilium agent pod') });
    const v = localPathCheck.evaluate(got, ctx(cluster));
    expect(v.status).toBe('fail');
    expect(v.message).toContain('Could not read the rules on dplab-rec-cilium-worker2');
  });

  it('say which step comes first when web is still Cluster (Local step) or Local (Cluster step)', () => {
    const local = recorded('follow-nodeport.solved.iptables.sim.json');
    const cluster = recorded('nodeport-masquerade.solved.iptables.sim.json');
    const e = { mode: 'iptables' as const, namespace: NS };
    const early = localPathCheck.evaluate(cluster, e);
    expect(early.status).toBe('fail');
    expect(early.pending ?? false).toBe(false);
    expect(early.message).toContain('externalTrafficPolicy Cluster; this step reads it as a NodePort with Local');
    expect(clusterPathCheck.evaluate(local, e).message).toContain('patch service web');
  });

  it('wait (pending) while the pods node has no local chain yet', () => {
    const obs = structuredClone(recorded('follow-nodeport.solved.iptables.sim.json'));
    // The worker as it was before its endpoints were written: the podless node's rules.
    obs.withPod = { ...obs.withoutPod!, node: obs.withPod!.node };
    const v = localPathCheck.evaluate(obs, { mode: 'iptables', namespace: NS });
    expect(v).toMatchObject({ status: 'fail', pending: true });
    expect(v.message).toContain('do not show the Local path yet');
  });
});
