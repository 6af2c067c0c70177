/** Where a learner stands: done only when every step passed on one mode; a read lesson is begun. */
import { describe, expect, it } from 'vitest';
import { labStanding, lessonStanding } from './course-progress.ts';

const steps = ['a', 'b', 'c'];

describe('labStanding', () => {
  it('counts the best mode, never adds modes up', () => {
    expect(labStanding({ passed: {}, hints: {} }, steps)).toEqual({ standing: 'not-started', passed: 0, total: 3 });
    expect(labStanding({ passed: { iptables: ['a', 'b'], ipvs: ['c'] }, hints: {} }, steps)).toEqual({
      standing: 'partly',
      passed: 2,
      total: 3,
    });
    expect(labStanding({ passed: { ipvs: ['c', 'a', 'b'] }, hints: {} }, steps).standing).toBe('done');
    // A step id the lab no longer has counts for nothing.
    expect(labStanding({ passed: { iptables: ['gone'] }, hints: {} }, steps).standing).toBe('not-started');
  });
});

describe('lessonStanding', () => {
  const done = { standing: 'done', passed: 3, total: 3 } as const;
  const none = { standing: 'not-started', passed: 0, total: 3 } as const;
  it('is done when read and its labs are done, begun when read or a lab is', () => {
    expect(lessonStanding(true, [done])).toBe('done');
    expect(lessonStanding(true, [done, none])).toBe('partly');
    expect(lessonStanding(false, [done])).toBe('partly');
    expect(lessonStanding(false, [none])).toBe('not-started');
    expect(lessonStanding(true, [])).toBe('done');
  });
});
