/** Lab progress (GET/PUT /api/progress), as the runner stores it and the page keeps a copy of it. */
import { z } from 'zod';
import { MODES } from './modes.ts';

export const PROGRESS_VERSION = 1;

export const labProgressSchema = () =>
  z.object({
    /** The mode the learner last used for this lab. */
    mode: z.enum(MODES).optional(),
    /** Per mode, the ids of the steps whose check passed. */
    passed: z.record(z.string(), z.array(z.string())).default({}),
    /** Per step, how many hints the learner has revealed. */
    hints: z.record(z.string(), z.number().int().min(0).max(100)).default({}),
    updatedAt: z.string().optional(),
  });

export const progressFileSchema = () =>
  z.object({
    version: z.literal(PROGRESS_VERSION).default(PROGRESS_VERSION),
    labs: z.record(z.string(), labProgressSchema()).default({}),
  });

export type LabProgress = z.output<ReturnType<typeof labProgressSchema>>;
export type ProgressFile = z.output<ReturnType<typeof progressFileSchema>>;
