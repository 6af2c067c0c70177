/**
 * While a DaemonSet rolls out, its pods are watched: a container that keeps exiting stops the wait
 * at once with the node it is on and its last log line, instead of the rollout's bound of minutes.
 * Measured here: kube-proxy in IPVS mode on a kernel without ip_vs restarted every few seconds
 * ("can't use the IPVS proxier: Ipvs not supported") while the start waited five minutes for it.
 */
import { z } from 'zod';
import { CommandError, type CommandResult, type RunOptions } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { sleep } from './wait.ts';

type Kubectl = (args: readonly string[], opts: RunOptions) => Promise<CommandResult>;

/** Restarts after which a container that is not ready counts as crashing (kubelet's back-off has begun). */
const CRASH_RESTARTS = 2;

const podsSchema = z
  .object({
    items: z
      .array(
        z
          .object({
            metadata: z.object({ name: z.string() }).passthrough(),
            spec: z.object({ nodeName: z.string().optional() }).passthrough().optional(),
            status: z
              .object({
                containerStatuses: z
                  .array(
                    z
                      .object({
                        name: z.string(),
                        ready: z.boolean().optional(),
                        restartCount: z.number().optional(),
                        state: z
                          .object({ waiting: z.object({ reason: z.string().optional() }).passthrough().optional() })
                          .passthrough()
                          .optional(),
                      })
                      .passthrough(),
                  )
                  .optional(),
              })
              .passthrough()
              .optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();

export interface Crash {
  pod: string;
  container: string;
  node: string | undefined;
  restarts: number;
}

/** The first container in `kubectl get pods -o json` that keeps exiting, or undefined. */
export function crashingContainer(podsJson: string): Crash | undefined {
  const parsed = podsSchema.safeParse(JSON.parse(podsJson));
  if (!parsed.success) return undefined;
  for (const pod of parsed.data.items ?? []) {
    for (const c of pod.status?.containerStatuses ?? []) {
      const restarts = c.restartCount ?? 0;
      const looping = c.state?.waiting?.reason === 'CrashLoopBackOff';
      if (looping || (restarts >= CRASH_RESTARTS && c.ready !== true))
        return { pod: pod.metadata.name, container: c.name, node: pod.spec?.nodeName, restarts };
    }
  }
  return undefined;
}

/** The log line that says why: the last that reads like an error (klog's `E…` or `err=`), else the last. */
export function crashLine(log: string): string {
  const lines = log
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.findLast((l) => /^E\d{4} |\berr(or)?[=:]/i.test(l)) ?? lines.at(-1) ?? '';
}

export interface CrashWatch {
  /** The pods' label selector in kube-system (`k8s-app=kube-proxy`). */
  label: string;
  /** Who they are, for the message ("kube-proxy"). */
  what: string;
  /** The fix for a crash whose log line this reads; undefined: the caller's own fix applies. */
  fixFor?: (line: string) => string | undefined;
  intervalMs: number;
  /** Bound of each read. */
  readMs: number;
  signal: AbortSignal;
}

/**
 * Reads the pods every `intervalMs` until `signal` aborts (then it resolves), and throws as soon as
 * one keeps exiting. A read that fails is tried again: the rollout's own wait reports a cluster
 * that does not answer.
 */
export async function watchForCrashes(kubectl: Kubectl, w: CrashWatch): Promise<void> {
  while (!w.signal.aborted) {
    let crash: Crash | undefined;
    try {
      const pods = await kubectl(['-n', 'kube-system', 'get', 'pods', '-l', w.label, '-o', 'json'], {
        timeoutMs: w.readMs,
        signal: w.signal,
      });
      crash = crashingContainer(pods.stdout);
    } catch (err) {
      if (w.signal.aborted || !(err instanceof CommandError || err instanceof SyntaxError)) return;
    }
    if (crash) throw await crashError(kubectl, w, crash);
    // Rejects once the wait is over, which ends the watch quietly.
    if (
      !(await sleep(w.intervalMs, w.signal).then(
        () => true,
        () => false,
      ))
    )
      return;
  }
}

async function crashError(kubectl: Kubectl, w: CrashWatch, c: Crash): Promise<DplabError> {
  let line = '';
  try {
    const log = await kubectl(['-n', 'kube-system', 'logs', c.pod, '-c', c.container, '--previous', '--tail=20'], {
      timeoutMs: w.readMs,
      signal: w.signal,
    });
    line = crashLine(log.stdout + log.stderr);
  } catch (err) {
    if (err instanceof CommandError) line = crashLine(err.stderr);
  }
  const where = c.node ? ` on ${c.node}` : '';
  return new DplabError(
    `${w.what}${where} keeps exiting (restarted ${c.restarts} time${c.restarts === 1 ? '' : 's'})${line ? `: ${line}` : '.'}`,
    {
      fix: (line && w.fixFor?.(line)) || undefined,
      details: `kubectl -n kube-system logs ${c.pod} -c ${c.container} --previous`,
      status: 500,
    },
  );
}
