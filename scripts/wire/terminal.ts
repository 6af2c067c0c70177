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

/** Clients split a paste into input messages of at most this many characters. */
export const INPUT_CHUNK_CHARS = 32 * 1024;

/** Splits terminal input into message-sized pieces, never between the halves of a surrogate pair. */
export function splitInput(data: string, max: number = INPUT_CHUNK_CHARS): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < data.length) {
    let end = Math.min(i + max, data.length);
    const last = data.charCodeAt(end - 1);
    if (end < data.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(data.slice(i, end));
    i = end;
  }
  return out;
}
