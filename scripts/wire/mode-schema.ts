/** A dataplane mode on the wire, as a zod schema (the names are in modes.ts). */
import { z } from './zod.ts';
import { MODES } from './modes.ts';

export const modeSchema = z.enum(MODES);
