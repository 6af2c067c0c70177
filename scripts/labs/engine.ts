/**
 * Runs a step's check against a live cluster: gather → evaluate, polled for a bounded window
 * while evaluate says the state is still converging, all under one deadline. Anything that
 * stops us from looking (no cluster, no Docker, a hung command) becomes an `error` result with
 * a fix; only evaluate can say `fail`.
 */
import { type ClusterHandle } from '../clusters/handle.ts';
import { clusterHandle } from '../clusters/providers.ts';
import type { Mode } from '../catalogue/modes.ts';
import { pollUntil } from './checks/poll.ts';
import { TIMEOUT_FACTOR } from '../base/exec.ts';
import { checkedObservations } from './observations.ts';
import type { Verdict } from './checks/types.ts';
import { clusterAbsent, describeClusterError } from '../clusters/cluster-errors.ts';
import type { Lab, Step } from './schema.ts';

/** The most a single check may take, polling included; past it the check reports a timeout. */
const CHECK_DEADLINE_MS = 90_000;
/** `DPLAB_CHECK_DEADLINE_MS` shortens or lengthens it (slow laptops, tests). */
function deadlineMs(): number {
  const n = Number(process.env.DPLAB_CHECK_DEADLINE_MS);
  return Number.isFinite(n) && n > 0 ? n : CHECK_DEADLINE_MS;
}
/** How long a converging state (pods starting, endpoints filling) is given before it counts as a fail. */
const SETTLE_MS = 30_000;

import type { CheckResult } from '../wire/checks.ts';

export type { CheckResult } from '../wire/checks.ts';

export interface CheckOptions {
  signal?: AbortSignal;
  /** Defaults to clusterHandle(mode); tests pass their own. */
  cluster?: ClusterHandle;
  deadlineMs?: number;
  settleMs?: number;
}

export async function runCheck(lab: Lab, step: Step, mode: Mode, opts: CheckOptions = {}): Promise<CheckResult> {
  const started = performance.now();
  const cluster = opts.cluster ?? clusterHandle(mode);
  const base = { lab: lab.id, step: step.id, mode };
  const finish = (r: Omit<CheckResult, 'lab' | 'step' | 'mode' | 'durationMs'>): CheckResult => ({
    ...base,
    ...r,
    durationMs: Math.round(performance.now() - started),
  });

  const absent = clusterAbsent(cluster);
  if (absent) return finish({ status: 'error', facts: [], attempts: 0, ...absent });

  const deadline = AbortSignal.timeout(opts.deadlineMs ?? deadlineMs());
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const ctx = { mode, namespace: lab.namespace, cluster, signal };
  let attempts = 0;
  try {
    const outcome = await pollUntil(
      async () => {
        attempts++;
        // Each attempt's commands end with it: when one read fails, its siblings are cancelled
        // instead of running on after the check has answered.
        const attempt = new AbortController();
        let observations: unknown;
        try {
          const gathered = await step.check.gather({ ...ctx, signal: AbortSignal.any([signal, attempt.signal]) });
          observations = checkedObservations(step.check.observations, gathered, `The check of ${lab.id}/${step.id}`);
        } finally {
          attempt.abort();
        }
        const verdict: Verdict = step.check.evaluate(observations, { mode, namespace: lab.namespace });
        return { observations, verdict };
      },
      (v) => !v.verdict.pending,
      // A machine slow throughout (DPLAB_TIMEOUT_FACTOR) converges slower too.
      { timeoutMs: opts.settleMs ?? (step.check.settleMs ?? SETTLE_MS) * TIMEOUT_FACTOR, signal },
    );
    const { verdict, observations } = outcome.value;
    const figures = verdict.figures ? { figures: verdict.figures } : {};
    return finish({ status: verdict.status, message: verdict.message, facts: verdict.facts, ...figures, attempts, observations });
  } catch (err) {
    const problem = describeClusterError(err, mode, 'the check', deadline.aborted);
    return finish({ status: 'error', facts: [], attempts, ...problem });
  }
}
