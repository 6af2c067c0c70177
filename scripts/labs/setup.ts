/**
 * A lab's setup on its cluster: the namespace (labelled as the course's), the setup manifests,
 * and the workspace files. `ensureLabSetup` is what the lab page asks for when it opens and
 * whenever the cluster becomes ready: it applies the setup once and then leaves the namespace
 * alone (a second apply would undo what the learner changed), marked by a label set last.
 * The workspace files are written even without a cluster, so reading them works at once.
 */
import { TIMEOUTS, type RunOptions } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { type ClusterHandle } from '../clusters/handle.ts';
import { clusterHandle } from '../clusters/providers.ts';
import type { Mode } from '../catalogue/modes.ts';
import { clusterAbsent, describeClusterError } from '../clusters/cluster-errors.ts';
import type { Lab } from './schema.ts';
import { labFilePath } from './registry.ts';
import { prepareWorkspace } from './solve.ts';
import { leaveLastLab } from './leaving.ts';

/** Label on every lab namespace, so `kubectl get ns -l dplab.io/lab` lists what the course created. */
const LAB_LABEL = 'dplab.io/lab';
/** Set once the whole setup went through; its absence means "apply the setup". */
export const SETUP_LABEL = 'dplab.io/setup';

import type { SetupResult } from '../wire/setup.ts';
export type { SetupResult };

/** Namespace, label, manifests, then the marker: an interrupted setup is applied again next time. */
export async function applySetup(lab: Lab, cluster: ClusterHandle, opts: { signal?: AbortSignal; exists?: boolean } = {}): Promise<void> {
  const run = { signal: opts.signal, timeoutMs: TIMEOUTS.long };
  if (!opts.exists) await cluster.kubectl(['create', 'namespace', lab.namespace], run);
  await cluster.kubectl(['label', 'namespace', lab.namespace, `${LAB_LABEL}=${lab.id}`, '--overwrite'], run);
  if (lab.setup.manifests.length) {
    await cluster.kubectl(['apply', '-n', lab.namespace, ...lab.setup.manifests.flatMap((m) => ['-f', labFilePath(lab.id, m)])], run);
  }
  await prepareWorkspace(lab);
  await cluster.kubectl(['label', 'namespace', lab.namespace, `${SETUP_LABEL}=${lab.id}`, '--overwrite'], run);
}

/** The lab's namespace as the API server has it (its phase, its labels), or undefined when there is none. */
export async function readNamespace(
  cluster: ClusterHandle,
  namespace: string,
  opts: RunOptions,
): Promise<{ terminating: boolean; labels: Record<string, string> } | undefined> {
  const r = await cluster.kubectl(['get', 'namespace', namespace, '--ignore-not-found', '-o', 'json'], opts);
  if (!r.stdout.trim()) return undefined;
  const ns = JSON.parse(r.stdout) as { metadata?: { labels?: Record<string, string> }; status?: { phase?: string } };
  return { terminating: ns.status?.phase === 'Terminating', labels: ns.metadata?.labels ?? {} };
}

/** Concurrent callers (two tabs, a reload) share one run per lab and mode. */
const inFlight = new Map<string, Promise<SetupResult>>();

export function ensureLabSetup(lab: Lab, mode: Mode, opts: { signal?: AbortSignal; cluster?: ClusterHandle } = {}): Promise<SetupResult> {
  const key = `${lab.id}/${mode}`;
  const running = inFlight.get(key);
  if (running) return running;
  const work = ensure(lab, mode, opts).finally(() => inFlight.delete(key));
  inFlight.set(key, work);
  return work;
}

async function ensure(lab: Lab, mode: Mode, opts: { signal?: AbortSignal; cluster?: ClusterHandle }): Promise<SetupResult> {
  const workspace = await prepareWorkspace(lab);
  const base = { lab: lab.id, mode, workspace, files: lab.setup.workspace.length, namespace: lab.namespace };
  const cluster = opts.cluster ?? clusterHandle(mode);
  if (clusterAbsent(cluster)) return { ...base, cluster: 'no-cluster' };
  try {
    // Opening this lab leaves the one set up here before: undo its changes outside its namespace.
    const restored = await leaveLastLab(lab, cluster, opts.signal);
    const labels = (await readNamespace(cluster, lab.namespace, { signal: opts.signal, timeoutMs: TIMEOUTS.normal }))?.labels;
    const put = restored.length ? { restored } : {};
    if (labels?.[SETUP_LABEL] === lab.id) return { ...base, ...put, cluster: 'already' };
    await applySetup(lab, cluster, { signal: opts.signal, exists: labels !== undefined });
    return { ...base, ...put, cluster: 'applied' };
  } catch (err) {
    const p = describeClusterError(err, mode, `setting up ${lab.id}`, false);
    throw new DplabError(p.message, { fix: p.fix, details: p.details, status: 502, cause: err });
  }
}
