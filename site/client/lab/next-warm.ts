/**
 * Which cluster a lab page has the runner start ahead (issue 41): the first lab after this one
 * on the course's path (the page is given them in order, from site/course/course.ts, so the
 * course order has one copy) that opens on another mode than this page's and whose cluster does
 * not exist yet. A lab opens on the mode the learner last chose for it, else its first.
 */

export interface UpcomingLab {
  readonly id: string;
  readonly title: string;
  /** Its modes, in order; it opens on the first unless the learner chose another. */
  readonly modes: readonly string[];
}

export interface WarmTarget {
  readonly lab: UpcomingLab;
  readonly mode: string;
  /** Its cluster was already started ahead (by this page before a reload, or another lab page): show it, ask nothing. */
  readonly startedAhead: boolean;
}

/** A mode's cluster as the page sees it: none yet, one the runner started ahead, or another (the learner's, or none can start here). */
export type ClusterKind = 'none' | 'ahead' | 'other';

/**
 * `current`: this page's mode; `cluster(mode)`: what that mode's cluster is;
 * `chosenMode(lab)`: the learner's saved choice for a lab.
 */
export function nextWarmTarget(
  upcoming: readonly UpcomingLab[],
  current: string,
  cluster: (mode: string) => ClusterKind,
  chosenMode: (lab: string) => string | undefined = () => undefined,
): WarmTarget | undefined {
  for (const lab of upcoming) {
    const chosen = chosenMode(lab.id);
    const mode = chosen !== undefined && lab.modes.includes(chosen) ? chosen : lab.modes[0];
    if (mode === undefined || mode === current) continue;
    const kind = cluster(mode);
    if (kind === 'other') continue;
    return { lab, mode, startedAhead: kind === 'ahead' };
  }
  return undefined;
}
