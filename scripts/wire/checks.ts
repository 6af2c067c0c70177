/** A step's check result (POST /api/labs/:lab/steps/:step/check) and its parts. */
import { z } from './zod.ts';
import { modeSchema } from './mode-schema.ts';

/** One line of "what we expected versus what the cluster showed". */
export const factSchema = z.object({ label: z.string(), expected: z.string(), seen: z.string(), ok: z.boolean() });
export type Fact = z.infer<typeof factSchema>;

/**
 * One number a check measured, for a page to plot or compare (scale-compare's chart). The facts
 * stay the learner's text; figures are the same measurements kept machine-readable.
 */
const figureSchema = z.object({
  value: z.number(),
  /** What the number counts, with its unit, e.g. `KUBE-* rules in iptables-save` or `ms`. */
  label: z.string(),
});
export type Figure = z.infer<typeof figureSchema>;

export const checkStatusSchema = z.enum(['pass', 'fail', 'error']);

export const checkResultSchema = z.object({
  lab: z.string(),
  step: z.string(),
  mode: modeSchema,
  status: checkStatusSchema,
  message: z.string(),
  facts: z.array(factSchema),
  /** The verdict's measurements, when its check takes any (scale-compare plots them). */
  figures: z.optional(z.record(z.string(), figureSchema)),
  /** For `error`: what to do about it. */
  fix: z.optional(z.string()),
  /** For `error`: command output, shown folded. */
  details: z.optional(z.string()),
  durationMs: z.number(),
  attempts: z.number(),
  /** What gather returned on the last attempt (the harness records these). */
  observations: z.optional(z.unknown()),
});
export type CheckResult = z.infer<typeof checkResultSchema>;
