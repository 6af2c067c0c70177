/**
 * The dashboard's grid, from what each seat's runner reports: one cell per step of the
 * workshop's lab (passed, failing with the last check's message, not started), and whether
 * the learner looks stuck. Pure: the watcher feeds it, tests call it directly.
 */
import type { Activity } from '../wire/activity.ts';
import type { StepCell } from '../wire/portal.ts';

/** Failing checks in a row on one step that count as stuck. */
const STUCK_FAIL_STREAK = 3;

export interface LabOutline {
  id: string;
  title: string;
  steps: readonly { id: string; title: string }[];
}

/** A lab's outline: what the dashboard needs of it (ids and titles), nothing of its checks. */
export function labOutline(lab: LabOutline): LabOutline {
  return { id: lab.id, title: lab.title, steps: lab.steps.map((s) => ({ id: s.id, title: s.title })) };
}

export function stepCells(lab: LabOutline, activity: Activity | undefined): StepCell[] {
  const entry = activity?.progress.labs[lab.id];
  const passed = new Set(Object.values(entry?.passed ?? {}).flat());
  return lab.steps.map((s) => {
    if (passed.has(s.id)) return { step: s.id, status: 'passed', failStreak: 0 };
    // The latest check of this step in any mode decides.
    const last = (activity?.checks ?? []).filter((c) => c.lab === lab.id && c.step === s.id).sort((a, b) => b.at - a.at)[0];
    if (last?.status === 'fail') return { step: s.id, status: 'failing', message: last.message, failStreak: last.failStreak };
    return { step: s.id, status: 'not-started', failStreak: 0 };
  });
}

/** Why a learner looks stuck: a run of failing checks on one step, or no keystroke for `idleMs` with steps left. */
export function stuckReason(
  lab: LabOutline,
  cells: readonly StepCell[],
  opts: { lastActiveAt?: number; now: number; idleMs: number },
): string | undefined {
  const worst = cells.filter((c) => c.failStreak >= STUCK_FAIL_STREAK).sort((a, b) => b.failStreak - a.failStreak)[0];
  if (worst) {
    const title = lab.steps.find((s) => s.id === worst.step)?.title ?? worst.step;
    return `${worst.failStreak} failing checks in a row on "${title}"`;
  }
  const done = cells.length > 0 && cells.every((c) => c.status === 'passed');
  if (!done && opts.lastActiveAt !== undefined && opts.now - opts.lastActiveAt > opts.idleMs) {
    return `idle for ${Math.floor((opts.now - opts.lastActiveAt) / 60_000)} min`;
  }
  return undefined;
}
