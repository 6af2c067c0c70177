/**
 * The shape of a lab check. `gather` is the impure half (it reads the cluster through the
 * handle and returns JSON-serialisable observations); `evaluate` is pure, so recorded or
 * hand-written observations can be replayed by `npm test` on machines without Docker.
 */
import type { z } from 'zod';
import type { ClusterHandle } from '../../clusters/handle.ts';
import type { Mode } from '../../catalogue/modes.ts';
import type { Fact, Figure } from '../../wire/checks.ts';

export type { Fact, Figure };

/** What `evaluate` decides. `error` is never produced here: only the engine says the cluster was unreachable. */
export interface Verdict {
  status: 'pass' | 'fail';
  /** One or two sentences addressed to the learner: what is missing, or what was confirmed. */
  message: string;
  facts: Fact[];
  /**
   * True when the state is on its way (pods starting, endpoints not yet ready, rules not yet
   * written), so the engine polls again within the check's settle window instead of failing now.
   */
  pending?: boolean;
  /** Measurements by name (e.g. `services`, `entries`), when the check took any. */
  figures?: Record<string, Figure>;
}

/** What evaluate may know besides the observations: the same in a live run and in a replay. */
export interface EvalContext {
  mode: Mode;
  /** The lab's namespace, e.g. `lab-first-service`. */
  namespace: string;
}

export interface GatherContext extends EvalContext {
  cluster: ClusterHandle;
  /** Aborted when the check's deadline passes or the client goes away. */
  signal: AbortSignal;
}

/** Observations are whatever gather returns, as long as JSON.stringify keeps them intact. */
type Observations = unknown;

/** The schema of a check's observations: applied to what gather returns and to every replayed file. */
export type ObservationSchema<O> = z.ZodType<O, z.ZodTypeDef, unknown>;

export interface Check<O = Observations> {
  /** What gather returns, as a schema: a recording of another shape fails loudly, naming the field. */
  observations: ObservationSchema<O>;
  gather(ctx: GatherContext): Promise<O>;
  evaluate(observations: O, ctx: EvalContext): Verdict;
  /** How long the engine keeps polling while evaluate says `pending` (default SETTLE_MS). */
  settleMs?: number;
}
