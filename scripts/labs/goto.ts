/**
 * Fast-forward and rewind, for presenting a lab: "bring the cluster to the start of step N" is
 * the lab's setup, then for each step before N its solution followed by its check; the run
 * stops at the first check that does not pass, with that check's message. "Reset to step N" is
 * the lab's reset (namespace thrown away and built again) and then the same. One
 * implementation for the page (POST /api/labs/:lab/steps/:step/goto and …/reset) and the CLI
 * (`dplab goto`, `dplab reset --step`).
 *
 * Progress is reported as the clusters' action events (clusters/progress.ts), so the event
 * stream, the CLI's progress printer and the wire types are the ones provisioning uses.
 */
import { randomBytes } from 'node:crypto';
import { clusterHandle } from '../clusters/providers.ts';
import type { ClusterHandle } from '../clusters/handle.ts';
import type { ClusterEvent } from '../clusters/events.ts';
import type { Mode } from '../catalogue/modes.ts';
import { ActionStatus, newProgress } from '../clusters/progress.ts';
import { clusterAbsent } from '../clusters/cluster-errors.ts';
import { errorToJson } from '../base/errors.ts';
import type { GotoResult } from '../wire/goto.ts';
import { runCheck, type CheckOptions } from './engine.ts';
import { clearPasses, recordPass } from './progress.ts';
import { loadLabs } from './registry.ts';
import { resetLab } from './reset.ts';
import { ensureLabSetup } from './setup.ts';
import { applySolution } from './solve.ts';
import type { Lab, Step } from './schema.ts';

export type { GotoResult };

export interface GotoOptions {
  /** Reset the lab first ("reset to step N") instead of building on what the cluster has. */
  reset?: boolean;
  signal?: AbortSignal;
  /** Defaults to clusterHandle(mode); tests pass their own. */
  cluster?: ClusterHandle;
  /** Each action's start and end, as cluster action events. */
  onEvent?: (event: ClusterEvent) => void;
  /** Check deadlines (tests shorten them). */
  check?: Pick<CheckOptions, 'deadlineMs' | 'settleMs'>;
}

/** The actions a run goes through, in order: what the page lists before it starts. */
export function gotoActions(lab: Lab, step: Step, reset: boolean): { id: string; title: string }[] {
  const before = lab.steps.slice(0, lab.steps.indexOf(step));
  return [
    reset ? { id: 'reset', title: `Reset ${lab.id} (namespace ${lab.namespace} built again)` } : { id: 'setup', title: 'Lab setup' },
    ...before.flatMap((s, i) => [
      { id: `solve:${s.id}`, title: `Step ${i + 1}, ${s.title}: apply the solution` },
      { id: `check:${s.id}`, title: `Step ${i + 1}, ${s.title}: check` },
    ]),
  ];
}

export async function gotoStep(lab: Lab, step: Step, mode: Mode, opts: GotoOptions = {}): Promise<GotoResult> {
  const started = performance.now();
  const reset = opts.reset === true;
  const cluster = opts.cluster ?? clusterHandle(mode);
  const index = lab.steps.indexOf(step);
  const runId = `goto-${randomBytes(4).toString('hex')}`;
  const progress = newProgress(runId, gotoActions(lab, step, reset));
  const emit = opts.onEvent ?? (() => undefined);
  const action = (id: string) =>
    new ActionStatus(
      progress.actions.find((a) => a.id === id)!,
      mode,
      runId,
      emit,
    );
  const solved: string[] = [];
  const checks: GotoResult['checks'] = [];
  let restored: string[] = [];
  const finish = (r: Pick<GotoResult, 'status' | 'message'> & Partial<GotoResult>): GotoResult => ({
    lab: lab.id,
    step: step.id,
    mode,
    reset,
    solved,
    checks,
    restored,
    ...r,
    durationMs: Math.round(performance.now() - started),
  });

  const absent = clusterAbsent(cluster);
  if (absent) return finish({ status: 'error', ...absent });
  emit({ type: 'info', mode, runId, at: Date.now(), message: `Bringing ${lab.id} to the start of step ${index + 1} (${step.title}).` });

  const first = action(reset ? 'reset' : 'setup');
  first.start();
  try {
    if (reset) {
      restored = (await resetLab(lab, mode, { signal: opts.signal, cluster })).restored;
      await clearPasses(loadLabs(), lab, mode, step.id);
    } else await ensureLabSetup(lab, mode, { signal: opts.signal, cluster });
    first.end(true);
  } catch (err) {
    first.end(false, errorToJson(err));
    return finish({ status: 'error', ...errorToJson(err) });
  }

  for (const s of lab.steps.slice(0, index)) {
    const solve = action(`solve:${s.id}`);
    solve.start();
    try {
      await applySolution(lab, s, mode, { signal: opts.signal, cluster });
      solve.end(true);
    } catch (err) {
      solve.end(false, errorToJson(err));
      return finish({ status: 'error', stoppedAt: s.id, ...errorToJson(err) });
    }
    const check = action(`check:${s.id}`);
    check.start();
    const { observations: _observations, ...result } = await runCheck(lab, s, mode, { signal: opts.signal, cluster, ...opts.check });
    checks.push(result);
    if (result.status !== 'pass') {
      check.end(false, { message: result.message, fix: result.fix, details: result.details });
      const what = result.status === 'fail' ? 'did not pass after its solution' : 'could not be checked';
      return finish({
        status: result.status === 'fail' ? 'failed' : 'error',
        stoppedAt: s.id,
        message: `Stopped at step ${lab.steps.indexOf(s) + 1} (${s.title}): its check ${what}. ${result.message}`,
        fix: result.fix,
        details: result.details,
      });
    }
    check.end(true);
    solved.push(s.id);
    await recordPass(loadLabs(), lab.id, s.id, mode);
  }
  const where =
    index === 0 ? 'the lab is set up' : index === 1 ? 'step 1 is solved and checked' : `steps 1–${index} are solved and checked`;
  return finish({ status: 'ready', message: `${lab.id} is at the start of step ${index + 1} (${step.title}): ${where}.` });
}
