/** POST /api/labs/:lab/setup: the lab's workspace files and, when its cluster runs, its namespace and manifests. */
import { z } from './zod.ts';
import { modeSchema } from './mode-schema.ts';

export const setupResultSchema = z.object({
  lab: z.string(),
  mode: modeSchema,
  /** Where the lab's files are (`<workspace>/<lab id>/`). */
  workspace: z.string(),
  files: z.number(),
  /** applied: just now; already: an earlier setup stands; no-cluster: only the files were written. */
  cluster: z.enum(['applied', 'already', 'no-cluster']),
  namespace: z.string(),
  /** What the lab set up here before this one changed outside its namespace, put back on leaving it (`ipvs-inspect: kube-proxy's IPVS scheduler set back…`). */
  restored: z.optional(z.array(z.string())),
});
export type SetupResult = z.infer<typeof setupResultSchema>;
