/**
 * Which clusters the live suite may touch: a `dplab-<mode>` cluster that existed before the
 * suite started is the user's. Kept apart from the suite so `npm test` can check the rule.
 */
import { clusterName, type Mode } from '../../scripts/catalogue/modes.ts';

/** Why this mode is skipped, or undefined: a cluster the user had is theirs unless reuse is allowed. */
export function modeSkip(mode: Mode, existing: ReadonlySet<string>, reuseExisting: boolean): string | undefined {
  if (existing.has(clusterName(mode)) && !reuseExisting) {
    return `${clusterName(mode)} existed before the suite started; it is left alone (DPLAB_LIVE_REUSE=1 runs the labs on it, still without deleting it)`;
  }
  return undefined;
}

/** The suite deletes a mode's cluster only when it was not there before. */
export function mayDelete(mode: Mode, existing: ReadonlySet<string>): boolean {
  return !existing.has(clusterName(mode));
}
