import { describe, expect, it } from 'vitest';
import { stepCells, stuckReason } from './dashboard.ts';
import type { Activity } from '../wire/activity.ts';

const lab = {
  id: 'first-service',
  title: 'First',
  steps: [
    { id: 'a', title: 'Deploy' },
    { id: 'b', title: 'Expose' },
    { id: 'c', title: 'Reach' },
  ],
};
const activity = (checks: Activity['checks'], passed: string[] = []): Activity => ({
  progress: { version: 1, labs: passed.length ? { 'first-service': { passed: { iptables: passed }, hints: {} } } : {} },
  checks,
});
const check = (step: string, status: 'pass' | 'fail' | 'error', at: number, failStreak = 0) => ({
  lab: 'first-service',
  step,
  mode: 'iptables' as const,
  status,
  message: `${step} ${status}`,
  at,
  failStreak,
});

describe('the grid', () => {
  it('passed from progress, failing with the last message from the check log, the rest not started', () => {
    const cells = stepCells(lab, activity([check('b', 'fail', 2, 2)], ['a']));
    expect(cells).toEqual([
      { step: 'a', status: 'passed', failStreak: 0 },
      { step: 'b', status: 'failing', message: 'b fail', failStreak: 2 },
      { step: 'c', status: 'not-started', failStreak: 0 },
    ]);
  });
  it('a cluster error is not the learner failing', () => {
    expect(stepCells(lab, activity([check('a', 'error', 1)]))[0].status).toBe('not-started');
  });
  it('a seat not read yet is all not started', () => {
    expect(stepCells(lab, undefined).map((c) => c.status)).toEqual(['not-started', 'not-started', 'not-started']);
  });
});

describe('stuck', () => {
  it('three failing checks in a row on one step', () => {
    const cells = stepCells(lab, activity([check('b', 'fail', 5, 3)]));
    expect(stuckReason(lab, cells, { now: 10, lastActiveAt: 9, idleMs: 1000 })).toBe('3 failing checks in a row on "Expose"');
    expect(
      stuckReason(lab, stepCells(lab, activity([check('b', 'fail', 5, 2)])), { now: 10, lastActiveAt: 9, idleMs: 1000 }),
    ).toBeUndefined();
  });
  it('idle too long with steps left, but not once every step passed', () => {
    const idle = { now: 11 * 60_000, lastActiveAt: 0, idleMs: 10 * 60_000 };
    expect(stuckReason(lab, stepCells(lab, activity([])), idle)).toBe('idle for 11 min');
    expect(stuckReason(lab, stepCells(lab, activity([], ['a', 'b', 'c'])), idle)).toBeUndefined();
  });
});
