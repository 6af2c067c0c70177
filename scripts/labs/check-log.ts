/**
 * The last check of every step this runner ran, with its run of failures: the workshop
 * dashboard's "failing with this message" and "stuck" come from here. In memory: a restart
 * forgets it (passes survive in progress.json), and it is bounded by the labs' steps × modes.
 */
import type { CheckRecord } from '../wire/activity.ts';
import type { CheckResult } from '../wire/checks.ts';
import { activityChanges } from './activity-changes.ts';

const records = new Map<string, CheckRecord>();

/** Record one check's verdict; an `error` (cluster unreachable) is not the learner's failure and leaves the streak. */
export function logCheck(result: Pick<CheckResult, 'lab' | 'step' | 'mode' | 'status' | 'message'>, at = Date.now()): CheckRecord {
  const key = `${result.lab}/${result.step}/${result.mode}`;
  const before = records.get(key);
  const streak = result.status === 'fail' ? (before?.failStreak ?? 0) + 1 : result.status === 'pass' ? 0 : (before?.failStreak ?? 0);
  const record: CheckRecord = {
    lab: result.lab,
    step: result.step,
    mode: result.mode,
    status: result.status,
    message: result.message,
    at,
    failStreak: streak,
  };
  records.set(key, record);
  activityChanges.emit();
  return record;
}

export function checkLog(): CheckRecord[] {
  return [...records.values()];
}
