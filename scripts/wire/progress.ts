/** Lab progress (GET/PUT /api/progress), as the runner stores it and the page keeps a copy of it. */
import { z } from './zod.ts';
import { MODES } from './modes.ts';

export const PROGRESS_VERSION = 1;

export const labProgressSchema = () =>
  z.object({
    /** The mode the learner last used for this lab. */
    mode: z.optional(z.enum(MODES)),
    /** Per mode, the ids of the steps whose check passed. */
    passed: z._default(z.record(z.string(), z.array(z.string())), {}),
    /** Per step, how many hints the learner has revealed. */
    hints: z._default(z.record(z.string(), z.int().check(z.minimum(0), z.maximum(100))), {}),
    updatedAt: z.optional(z.string()),
  });

export const progressFileSchema = () =>
  z.object({
    version: z._default(z.literal(PROGRESS_VERSION), PROGRESS_VERSION),
    labs: z._default(z.record(z.string(), labProgressSchema()), {}),
  });

export type LabProgress = z.output<ReturnType<typeof labProgressSchema>>;
export type ProgressFile = z.output<ReturnType<typeof progressFileSchema>>;
