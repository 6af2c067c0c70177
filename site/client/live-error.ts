/**
 * A request to a running cluster (the explorer's live read, a trace) that failed because no
 * cluster can start on this machine at all (Docker or kind missing): that blocker and its fix,
 * rather than a Start that cannot work. The runner says 409 when the cluster is not up; only then
 * is the blocker asked for.
 */
import { askBlocker, blockedAction } from './cluster-blocker.ts';
import type { ShownError } from './dataplane-result.ts';

/** The blocker behind `err` as the error to show, or null when none is; `then`: what to do once it is gone, or meanwhile. */
export async function blockerError(mode: string, err: ShownError, then: string): Promise<ShownError | null> {
  const blocker = err.status === 409 ? await askBlocker(mode) : null;
  return blocker
    ? blockedAction(blocker, `Then start the cluster with \`dplab up ${mode}\` or on the Clusters page (/clusters/). ${then}`)
    : null;
}
