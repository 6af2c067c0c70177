/**
 * "A command run in a pod / on a node prints something" (e.g. `curl web/hostname` from the
 * client pod). A command that exits non-zero is part of what the learner's cluster shows, so it
 * becomes an observation; only infrastructure failures (cluster gone, timeout) propagate.
 */
import { z } from 'zod';
import { CommandError, type CommandResult } from '../../base/exec.ts';
import { fact, fail } from './facts.ts';
import { firstItem, getByName, podReady } from './kube.ts';
import type { EvalContext, GatherContext, Verdict } from './types.ts';

/** How long one command inside a pod or node may take before the check reports a timeout. */
export const IN_CLUSTER_COMMAND_TIMEOUT_MS = 30_000;

export const commandObservationSchema = z.object({ exitCode: z.number(), stdout: z.string(), stderr: z.string() });
export type CommandObservation = z.infer<typeof commandObservationSchema>;

export const podCommandObservationSchema = z.object({
  /** null when no pod of that name exists. */
  pod: z.object({ name: z.string(), phase: z.string(), ready: z.boolean(), node: z.string().optional() }).nullable(),
  /** Absent when the pod was missing or not ready, so nothing was run. */
  result: commandObservationSchema.optional(),
});
export type PodCommandObservation = z.infer<typeof podCommandObservationSchema>;

/** Turn a finished command, or a plain non-zero exit, into an observation. */
export async function observeCommand(run: () => Promise<CommandResult>): Promise<CommandObservation> {
  try {
    const r = await run();
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'failed') return { exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr };
    throw err;
  }
}

/** `kubectl exec <pod> -- <command…>` when the pod exists and is ready. */
export async function gatherPodCommand(ctx: GatherContext, pod: string, command: readonly string[]): Promise<PodCommandObservation> {
  const found = firstItem(await getByName(ctx, 'pods', pod));
  if (!found) return { pod: null };
  const info = { name: pod, phase: String(found.status?.phase ?? 'Unknown'), ready: podReady(found), node: found.spec?.nodeName };
  if (!info.ready) return { pod: info };
  const result = await observeCommand(() =>
    ctx.cluster.kubectl(['exec', '-n', ctx.namespace, pod, '--', ...command], {
      signal: ctx.signal,
      timeoutMs: IN_CLUSTER_COMMAND_TIMEOUT_MS,
    }),
  );
  return { pod: info, result };
}

/** The pod half of a verdict: missing or not ready, or undefined when the command did run. */
export function podNotUsable(pod: string, obs: PodCommandObservation, ctx: EvalContext, howToStart: string): Verdict | undefined {
  if (!obs.pod)
    return fail(`There is no pod \`${pod}\` in namespace \`${ctx.namespace}\` yet. ${howToStart}`, [
      fact(`pod ${pod}`, 'Running and Ready', 'not found', false),
    ]);
  if (!obs.pod.ready || !obs.result) {
    return fail(
      `Pod \`${pod}\` is ${obs.pod.phase} but not Ready yet.`,
      [fact(`pod ${pod}`, 'Running and Ready', `${obs.pod.phase}, not Ready`, false)],
      true,
    );
  }
  return undefined;
}

/** Run a command inside a node container (`docker exec`). */
export async function gatherNodeCommand(ctx: GatherContext, node: string, command: readonly string[]): Promise<CommandObservation> {
  return observeCommand(() => ctx.cluster.nodeExec(node, command, { signal: ctx.signal, timeoutMs: IN_CLUSTER_COMMAND_TIMEOUT_MS }));
}
