/**
 * Which cluster a lab page has the runner start ahead (issue 41): the first lab after this one
 * on the course's path (the page is given them in order, from site/course/course.ts, so the
 * course order has one copy) that opens on another mode than this page's and whose cluster does
 * not exist yet. A lab opens on the mode the learner last chose for it, else its first.
 */
import type { ClusterWarm } from '../../../scripts/wire/clusters.ts';

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

/** What asking ahead came to: the cluster already started ahead, the runner's answer for a target, or no target. */
export type WarmAsk =
  | { kind: 'ahead'; target: WarmTarget }
  | { kind: 'asked'; target: WarmTarget; answer: ClusterWarm }
  /** No lab ahead to start; `cannotStart` is the runner's sentence for the first mode this host cannot start, if one was passed over. */
  | { kind: 'none'; cannotStart?: string };

/**
 * Find the next lab's mode and ask the runner (`ask`) to start it. A mode the runner says this host
 * cannot start (reason `host`: a kernel without ip_vs) goes into `hostCannot` and is passed over
 * for the lab after it; each mode is asked at most once, so this ends.
 */
export async function askAhead(
  upcoming: readonly UpcomingLab[],
  current: string,
  cluster: (mode: string) => ClusterKind,
  chosenMode: (lab: string) => string | undefined,
  hostCannot: Set<string>,
  ask: (mode: string) => Promise<ClusterWarm>,
): Promise<WarmAsk> {
  let cannotStart: string | undefined;
  for (;;) {
    const target = nextWarmTarget(upcoming, current, (m) => (hostCannot.has(m) ? 'other' : cluster(m)), chosenMode);
    if (!target) return cannotStart === undefined ? { kind: 'none' } : { kind: 'none', cannotStart };
    if (target.startedAhead) return { kind: 'ahead', target };
    const answer = await ask(target.mode);
    if (answer.outcome === 'declined' && answer.reason === 'host') {
      hostCannot.add(target.mode);
      cannotStart ??= answer.message;
      continue;
    }
    return { kind: 'asked', target, answer };
  }
}
