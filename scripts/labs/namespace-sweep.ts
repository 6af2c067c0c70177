/**
 * Emptying a lab's namespace in place, for Reset. Deleting the namespace and making it again
 * waits for the namespace controller to finalise it, pod terminations included: about 10 s on
 * kind, every Reset. Reset keeps the namespace instead and deletes what is in it at once:
 *
 * - every kind of object the cluster serves in a namespace (asked once per cluster; a kind that
 *   went away since is asked again), so a learner's ConfigMap, Role or CiliumNetworkPolicy goes
 *   too, not only what the lab's manifests made;
 * - the workload controllers first, then the pods, then the rest, so no ReplicaSet makes a pod
 *   again after the pods went;
 * - with no grace period: the objects leave the API at once (the kubelet stops old containers
 *   in the background), so the setup's own objects of the same names can be made straight after;
 * - except what Kubernetes keeps in every namespace: the `default` ServiceAccount and the
 *   `kube-root-ca.crt` ConfigMap (a pod made while they are missing is refused), and events.
 */
import { CommandError, type RunOptions } from '../base/exec.ts';
import type { ClusterHandle } from '../clusters/handle.ts';

/** What Kubernetes makes in every namespace and a setup's pods need; never swept. */
const KEPT_NAMES = ['default', 'kube-root-ca.crt'];
/** Kinds not worth deleting: the API server expires them itself. */
const SKIPPED_KINDS = new Set(['events', 'events.events.k8s.io']);
/** Kinds that make pods, deleted before the pods so none comes back. */
const CONTROLLERS = [
  'deployments.apps',
  'statefulsets.apps',
  'daemonsets.apps',
  'cronjobs.batch',
  'jobs.batch',
  'replicasets.apps',
  'replicationcontrollers',
];

const kindsByCluster = new Map<string, string[]>();

/** Controllers first, then pods, then the rest in the order the API server gave them. */
export function sweepOrder(kinds: readonly string[]): string[] {
  const served = kinds.filter((k) => !SKIPPED_KINDS.has(k));
  const first = [...CONTROLLERS.filter((k) => served.includes(k)), ...(served.includes('pods') ? ['pods'] : [])];
  return [...first, ...served.filter((k) => !first.includes(k))];
}

async function namespacedKinds(cluster: ClusterHandle, opts: RunOptions, fresh: boolean): Promise<string[]> {
  const key = `${cluster.name}\n${cluster.kubeconfig}`;
  const known = kindsByCluster.get(key);
  if (known && !fresh) return known;
  const r = await cluster.kubectl(['api-resources', '--namespaced=true', '--verbs=list,delete', '-o', 'name'], opts);
  const kinds = sweepOrder(
    r.stdout
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  );
  kindsByCluster.set(key, kinds);
  return kinds;
}

/** Delete everything in `namespace` but what every namespace keeps; returns at once. */
export async function emptyNamespace(cluster: ClusterHandle, namespace: string, opts: RunOptions): Promise<void> {
  const sweep = async (fresh: boolean) =>
    cluster.kubectl(
      [
        'delete',
        (await namespacedKinds(cluster, opts, fresh)).join(','),
        '-n',
        namespace,
        // The field selector picks every object but the kept ones (kubectl refuses --all beside a selector).
        '--ignore-not-found',
        `--field-selector=${KEPT_NAMES.map((n) => `metadata.name!=${n}`).join(',')}`,
        '--grace-period=0',
        '--force',
        '--wait=false',
      ],
      opts,
    );
  try {
    await sweep(false);
  } catch (err) {
    // A CRD removed since the kinds were asked (Cilium's, after a new cluster): ask again, once.
    const said = err instanceof CommandError ? err.stderr : '';
    if (!/doesn't have a resource type|could not find the requested resource/i.test(said)) throw err;
    await sweep(true);
  }
}
