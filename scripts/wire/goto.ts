/**
 * Fast-forward and rewind (POST /api/labs/:lab/steps/:step/goto, `dplab goto`): bring a lab's
 * cluster to the start of a step. Progress travels as the clusters' `action` events (one per
 * setup, solution and check, scripts/wire/clusters.ts), the outcome as this result.
 */
import { z } from './zod.ts';
import { checkResultSchema } from './checks.ts';
import { clusterEventSchema } from './clusters.ts';
import { modeSchema } from './mode-schema.ts';

const gotoStatusSchema = z.enum([
  /** Every earlier step's solution applied and its check passed: the cluster is at the start of `step`. */
  'ready',
  /** An earlier step's check did not pass after its solution; `stoppedAt` names it. */
  'failed',
  /** The cluster could not be reached or a solution failed to apply. */
  'error',
]);

export const gotoResultSchema = z.object({
  lab: z.string(),
  step: z.string(),
  mode: modeSchema,
  /** True when the lab was reset first ("reset to step N"). */
  reset: z.boolean(),
  status: gotoStatusSchema,
  message: z.string(),
  fix: z.optional(z.string()),
  details: z.optional(z.string()),
  /** Steps whose solution was applied and whose check passed, in order. */
  solved: z.array(z.string()),
  /** The step whose solution or check stopped the run. */
  stoppedAt: z.optional(z.string()),
  /** Each check's result, in order (observations left out). */
  checks: z.array(z.omit(checkResultSchema, { observations: true })),
  /** Cluster-wide changes a reset undid. */
  restored: z.array(z.string()),
  durationMs: z.number(),
});
export type GotoResult = z.infer<typeof gotoResultSchema>;

/** The goto stream's events: the progress of each action, then one `result`. */
export const gotoEventSchema = z.union([clusterEventSchema, z.object({ type: z.literal('result'), result: gotoResultSchema })]);
export type GotoEvent = z.infer<typeof gotoEventSchema>;
