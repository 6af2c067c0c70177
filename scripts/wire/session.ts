/** GET /api/session: the page is signed in to this runner. */
import { z } from './zod.ts';

export const sessionSchema = z.object({ ok: z.literal(true) });

/** Answers the page does not read beyond "it worked" (solve, reset, progress PUT). */
export const acceptedSchema = z.unknown();
