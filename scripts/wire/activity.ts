/**
 * GET /api/activity (and its stream, /api/activity/events): what a learner did on this runner, for the workshop portal's dashboard.
 * Progress says which steps passed; the check log adds the last verdict per step and how many
 * checks failed in a row, which is how the dashboard tells "stuck" from "not started".
 */
import { z } from './zod.ts';
import { checkStatusSchema } from './checks.ts';
import { modeSchema } from './mode-schema.ts';
import { progressFileSchema } from './progress.ts';
import { clusterStateSchema } from './clusters.ts';

const checkRecordSchema = z.object({
  lab: z.string(),
  step: z.string(),
  mode: modeSchema,
  status: checkStatusSchema,
  /** The check's headline, as the learner saw it. */
  message: z.string(),
  /** Epoch ms of the last check of this step. */
  at: z.number(),
  /** Checks of this step that failed (status fail) back to back, up to now; 0 after a pass. */
  failStreak: z.int().check(z.minimum(0)),
});
export type CheckRecord = z.infer<typeof checkRecordSchema>;

export const activitySchema = z.object({
  progress: progressFileSchema(),
  /** The last check of each lab, step and mode this runner ran since it started. */
  checks: z.array(checkRecordSchema),
});
export type Activity = z.infer<typeof activitySchema>;

/** One cluster's state on GET /api/activity/events (event `cluster`). */
export const activityClusterSchema = z.object({ mode: modeSchema, state: clusterStateSchema });
export type ActivityCluster = z.infer<typeof activityClusterSchema>;
