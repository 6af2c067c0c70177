/**
 * The terminal socket's JSON control frames (the protocol is described in
 * scripts/terminals/protocol.ts, which validates what clients send with its own messages).
 */
import { z } from './zod.ts';

export type ClientMessage =
  { type: 'input'; data: string } | { type: 'resize'; cols: number; rows: number } | { type: 'ack'; bytes: number };

/** What a watcher mirrors: the terminal's id (`null` while the runner has no shell to show) and its grid. */
const mirrorSchema = z.object({
  type: z.literal('mirror'),
  terminal: z.nullable(z.string()),
  mode: z.nullable(z.string()),
  /** The node a node shell runs on; null for a learner shell. */
  node: z.nullable(z.string()),
  cols: z.int(),
  rows: z.int(),
});

/**
 * The OSC sequence number a lab shell's rc file writes last (`ESC ] 7701 ; BEL`), just before its
 * first prompt: the page keeps "Starting your shell…" up until it comes, not until the first output.
 */
export const SHELL_READY_OSC = 7701;

/**
 * The OSC sequence number (`ESC ] 7702 ; BEL`) a lab shell writes once before every prompt (its
 * PROMPT_COMMAND, zsh's precmd), not only the first: the page holds a click-to-run command until
 * the one before it has brought the prompt back (site/client/run-queue.ts).
 */
export const SHELL_PROMPT_OSC = 7702;

/** How a shell's start shows (the `ready` frame): the learner's rc file it reads, and whether SHELL_READY_OSC will come. */
const shellStartupSchema = z.object({ rc: z.nullable(z.string()), marker: z.boolean() });

export const serverMessageSchema = z.discriminatedUnion('type', [
  // `terminal` names this shell for the broadcast (GET/POST /api/terminal/broadcast); older runners omit it.
  z.object({
    type: z.literal('ready'),
    shell: z.string(),
    cwd: z.string(),
    mode: z.nullable(z.string()),
    terminal: z.optional(z.string()),
    /** Older runners omit it: the page then takes the first output for the prompt. */
    startup: z.optional(shellStartupSchema),
  }),
  z.object({ type: z.literal('notice'), message: z.string() }),
  z.object({ type: z.literal('error'), message: z.string() }),
  z.object({ type: z.literal('exit'), code: z.number(), signal: z.nullable(z.number()) }),
  // Watch socket only: a new screen starts (the viewer resets its terminal to this grid; the replay follows as binary frames).
  mirrorSchema,
  // Watch socket only: the watched terminal was resized.
  z.object({ type: z.literal('resize'), cols: z.int(), rows: z.int() }),
]);
export type ServerMessage = z.infer<typeof serverMessageSchema>;

/** Clients split a paste into input messages of at most this many characters. */
export const INPUT_CHUNK_CHARS = 32 * 1024;

/**
 * A client acknowledges output after drawing at least this many bytes more. Half the
 * flow-control window's low mark (scripts/terminals/protocol.ts FLOW): the runner resumes a
 * paused shell once less than that mark is unacknowledged, so it learns of it in time. At 32 KiB
 * the page sent ~1,400 acks for 44 MB, and each `send` cost it ~0.1 ms of main thread.
 */
export const ACK_EVERY_BYTES = 128 * 1024;

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

/** `GET /api/terminal/broadcast`: the shells a presenter can broadcast, and which one is. */
const broadcastTerminalSchema = z.object({
  id: z.string(),
  mode: z.nullable(z.string()),
  node: z.nullable(z.string()),
  cols: z.int(),
  rows: z.int(),
  /** Epoch milliseconds. */
  openedAt: z.number(),
});
export const broadcastStateSchema = z.object({
  /** The terminal watchers see now (null: none open). */
  terminal: z.nullable(z.string()),
  /** True when the presenter chose it; false when it follows the most recently opened learner shell. */
  pinned: z.boolean(),
  watchers: z.int(),
  terminals: z.array(broadcastTerminalSchema),
});
export type BroadcastState = z.infer<typeof broadcastStateSchema>;

/** `GET /api/terminal/viewer-link`: the presenter's page asks for the read-only link to hand out. */
export const viewerLinkSchema = z.object({ path: z.string().check(z.startsWith('/watch/#viewer=')) });
