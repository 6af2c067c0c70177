/** The one "wait until X" helper: bounded polling with an abort signal, no unbounded loops. */
import { DplabError } from '../base/errors.ts';

export interface WaitOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** Pause between attempts. */
  intervalMs: number;
  signal?: AbortSignal;
  /** What we wait for, for the timeout message ("Cilium to report KubeProxyReplacement: True"). */
  what: string;
  fix?: string;
}

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Call `attempt` until it returns `{ done: true, value }` or time runs out. `seen` of the last
 * attempt goes into the timeout error's details, so "never became ready" says what it saw.
 */
export async function waitUntil<T>(
  attempt: () => Promise<{ done: true; value: T } | { done: false; seen: string }>,
  opts: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastSeen: string;
  for (;;) {
    opts.signal?.throwIfAborted();
    const r = await attempt();
    if (r.done) return r.value;
    lastSeen = r.seen;
    const left = deadline - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(opts.intervalMs, left), opts.signal);
  }
  throw new DplabError(`Timed out after ${Math.round(opts.timeoutMs / 1000)} s waiting for ${opts.what}.`, {
    fix: opts.fix,
    details: lastSeen ? `Last seen:\n${lastSeen}` : undefined,
    status: 504,
  });
}
