/** The error shape every API answer and event carries: a headline, the fix, folded details. */
import { z } from './zod.ts';

export const errorJsonSchema = z.object({
  message: z.string(),
  /** What the learner can do about it. */
  fix: z.optional(z.string()),
  /** Command output and the like, shown folded. */
  details: z.optional(z.string()),
});
export type ErrorJson = z.infer<typeof errorJsonSchema>;

/** The body of every 4xx/5xx answer of the API. */
export const errorBodySchema = z.object({ error: errorJsonSchema });
