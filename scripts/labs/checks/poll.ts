/**
 * The one polling helper. Endpoints, rules and pods converge a few seconds after the learner's
 * command returns, so checks retry for a bounded window instead of failing on the first look.
 */
/** Pause between attempts: short enough to feel live, long enough not to hammer the API server. */
const POLL_INTERVAL_MS = 1_500;

export interface PollOptions {
  /** Total budget across all attempts; the last value is returned when it runs out. */
  timeoutMs: number;
  intervalMs?: number;
  signal?: AbortSignal;
}

export interface PollOutcome<T> {
  value: T;
  attempts: number;
  /** True when the deadline passed before `done` said yes. */
  timedOut: boolean;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Call `attempt` until `done(value)` or the deadline. Errors thrown by `attempt` propagate at
 * once: an unreachable cluster will not become reachable by asking again within seconds.
 */
export async function pollUntil<T>(attempt: () => Promise<T>, done: (value: T) => boolean, opts: PollOptions): Promise<PollOutcome<T>> {
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? POLL_INTERVAL_MS;
  let attempts = 0;
  for (;;) {
    const value = await attempt();
    attempts++;
    if (done(value)) return { value, attempts, timedOut: false };
    const left = deadline - Date.now();
    if (left <= 0 || opts.signal?.aborted) return { value, attempts, timedOut: true };
    await sleep(Math.min(interval, left), opts.signal);
  }
}
