/**
 * The kind/kubectl calls provisioning and status share, each with the cluster's own
 * kubeconfig: kind and kubectl get `--kubeconfig`, the cilium CLI gets `KUBECONFIG`, so
 * ~/.kube/config is never read or written.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { run, type CommandResult, type RunOptions } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { clusterName, kubeconfigPath, type Mode } from '../catalogue/modes.ts';
import type { ClusterHandle } from './handle.ts';

export function kubectlFor(mode: Mode) {
  return (args: readonly string[], opts: RunOptions) => run('kubectl', ['--kubeconfig', kubeconfigPath(mode), ...args], opts);
}

/** Names of all kind clusters on this Docker host. */
export async function kindClusters(opts: RunOptions): Promise<string[]> {
  const r = await run('kind', ['get', 'clusters'], opts);
  // kind prints "No kind clusters found." on stderr when there are none.
  return r.stdout
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function ensureKubeconfigDir(mode: Mode): void {
  mkdirSync(dirname(kubeconfigPath(mode)), { recursive: true });
}

/** Write the cluster's kubeconfig into the state folder (when it went missing). */
export function exportKubeconfig(mode: Mode, opts: RunOptions): Promise<CommandResult> {
  ensureKubeconfigDir(mode);
  return run('kind', ['export', 'kubeconfig', '--name', clusterName(mode), '--kubeconfig', kubeconfigPath(mode)], opts);
}

/** kind removes the cluster's entry from the kubeconfig it is given; give it ours, not ~/.kube/config. */
export function kindDelete(mode: Mode, opts: RunOptions): Promise<CommandResult> {
  return run('kind', ['delete', 'cluster', '--name', clusterName(mode), '--kubeconfig', kubeconfigPath(mode)], opts);
}

interface NodeList {
  items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[];
}

export interface NodeHealth {
  total: number;
  ready: number;
  notReady: string[];
}

/** The nodes' readiness, through the cluster handle's kubectl (its kubeconfig, its provider's kubectl). */
export async function nodeHealth(cluster: Pick<ClusterHandle, 'kubectl'>, opts: RunOptions): Promise<NodeHealth> {
  const r = await cluster.kubectl(['get', 'nodes', '-o', 'json'], opts);
  let list: NodeList;
  try {
    list = JSON.parse(r.stdout) as NodeList;
  } catch {
    throw new DplabError('`kubectl get nodes -o json` did not print JSON.', { details: r.stdout.slice(0, 2000) });
  }
  const notReady = list.items
    .filter((n) => !n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((n) => n.metadata.name);
  return { total: list.items.length, ready: list.items.length - notReady.length, notReady };
}
