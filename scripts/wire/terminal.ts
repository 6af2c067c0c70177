/**
 * The terminal socket's JSON control frames (the protocol is described in
 * scripts/terminals/protocol.ts, which validates what clients send with its own messages).
 */
import { z } from 'zod';

export type ClientMessage =
  { type: 'input'; data: string } | { type: 'resize'; cols: number; rows: number } | { type: 'ack'; bytes: number };

export const serverMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), shell: z.string(), cwd: z.string(), mode: z.string().nullable() }),
  z.object({ type: z.literal('notice'), message: z.string() }),
  z.object({ type: z.literal('error'), message: z.string() }),
  z.object({ type: z.literal('exit'), code: z.number(), signal: z.number().nullable() }),
]);
export type ServerMessage = z.infer<typeof serverMessageSchema>;
