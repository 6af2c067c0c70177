/**
 * The terminal WebSocket protocol (`/api/terminal?cols=N&rows=N[&mode=M]`).
 *
 * Server → client
 *   - binary frames: raw pty output bytes, in order. The client writes them to xterm.js.
 *     While output keeps coming the server gathers it into frames of up to FLOW.batchMaxBytes
 *     (for at most FLOW.batchWindowMs); the first output after a quiet spell (a keystroke's
 *     echo, a prompt), and all output for FLOW.batchAfterInputMs after input, is sent at once
 *     (terminals/batch.ts).
 *   - text frames: JSON control messages
 *       {"type":"ready","shell":"/bin/bash","cwd":"…","mode":"iptables"|null}
 *       {"type":"notice","message":"…"}          something the learner should know (cluster not running)
 *       {"type":"error","message":"…"}           a client message was refused; the session goes on
 *       {"type":"exit","code":N,"signal":N|null}  the shell ended; the server closes the socket next
 *
 * Client → server (text frames, JSON)
 *       {"type":"input","data":"…"}               keystrokes / pasted text for the pty
 *       {"type":"resize","cols":N,"rows":N}       the fit addon's size, integers within TERMINAL_LIMITS
 *       {"type":"ack","bytes":N}                  bytes of output the client has rendered
 *
 * Flow control: the server counts output bytes sent but not yet acknowledged. Above
 * FLOW.highWatermark it pauses the pty (the shell blocks on write, so `yes` cannot flood the
 * page); below FLOW.lowWatermark it resumes. Keystrokes keep flowing the other way, so Ctrl-C
 * reaches the shell at once.
 *
 * Input: a paste is sent as several input messages (splitInput); the server queues them for the
 * pty and writes as fast as the shell reads (terminals/pty-input.ts), never blocking.
 */
import { ACK_EVERY_BYTES, INPUT_CHUNK_CHARS, type ClientMessage, type ServerMessage } from '../wire/terminal.ts';
export { splitInput } from '../wire/terminal.ts';

export const TERMINAL_LIMITS = {
  minCols: 2,
  maxCols: 1000,
  minRows: 1,
  maxRows: 500,
  /** One input message; a paste larger than this is refused with an error frame. */
  maxInputChars: 256 * 1024,
  /** Largest WebSocket message the server accepts at all. */
  maxPayloadBytes: 1024 * 1024,
  /** Clients split a paste into input messages of at most this many characters (scripts/wire/terminal.ts). */
  inputChunkChars: INPUT_CHUNK_CHARS,
  /** Input queued for a shell that does not read it; beyond this, input is refused with an error frame. */
  maxQueuedInputBytes: 16 * 1024 * 1024,
} as const;

export const FLOW = {
  // What is in flight is what the page must draw before Ctrl-C's prompt shows, so the window is
  // as small as bulk output allows. The low mark must keep the page busy while the pty refills
  // after a resume: at 512/64 KiB the page ran dry after every resume (bulk ~30 % slower). A/B
  // in one browser, 6 rounds each (issue 15): 1 MiB/512 KiB drew 8.2 MB/s and showed Ctrl-C's
  // prompt in 153 ms; 512/256 KiB 8.6 MB/s and 76 ms; 256/128 KiB 7.3 MB/s and 37 ms.
  highWatermark: 512 * 1024,
  lowWatermark: 256 * 1024,
  /** The client acknowledges after rendering at least this many bytes (scripts/wire/terminal.ts). */
  ackEvery: ACK_EVERY_BYTES,
  /** Output is sent in frames of up to this many bytes (terminals/batch.ts)… */
  batchMaxBytes: 64 * 1024,
  /** …gathered for at most this long while output keeps coming; a lone echo goes out at once. */
  batchWindowMs: 4,
  /** …except for this long after input, when output is most likely its answer and goes at once. */
  batchAfterInputMs: 20,
} as const;

/** The frame types are wire types, shared with the browser (scripts/wire/terminal.ts). */
export type { ClientMessage, ServerMessage };

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

function validSize(cols: unknown, rows: unknown): boolean {
  return isInt(cols, TERMINAL_LIMITS.minCols, TERMINAL_LIMITS.maxCols) && isInt(rows, TERMINAL_LIMITS.minRows, TERMINAL_LIMITS.maxRows);
}

/** Validate one text frame from the client. Never throws. */
export function parseClientMessage(text: string): Parsed<ClientMessage> {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return { ok: false, error: 'Control message is not valid JSON.' };
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return { ok: false, error: 'Control message must be a JSON object.' };
  const m = msg as Record<string, unknown>;
  switch (m.type) {
    case 'input':
      if (typeof m.data !== 'string') return { ok: false, error: 'input.data must be a string.' };
      if (m.data.length > TERMINAL_LIMITS.maxInputChars)
        return { ok: false, error: `input.data is longer than ${TERMINAL_LIMITS.maxInputChars} characters.` };
      return { ok: true, value: { type: 'input', data: m.data } };
    case 'resize':
      if (!validSize(m.cols, m.rows)) {
        return {
          ok: false,
          error: `resize needs integer cols ${TERMINAL_LIMITS.minCols}–${TERMINAL_LIMITS.maxCols} and rows ${TERMINAL_LIMITS.minRows}–${TERMINAL_LIMITS.maxRows}.`,
        };
      }
      return { ok: true, value: { type: 'resize', cols: m.cols as number, rows: m.rows as number } };
    case 'ack':
      if (!isInt(m.bytes, 0, Number.MAX_SAFE_INTEGER)) return { ok: false, error: 'ack.bytes must be a non-negative integer.' };
      return { ok: true, value: { type: 'ack', bytes: m.bytes as number } };
    default:
      return { ok: false, error: `Unknown control message type ${JSON.stringify(m.type)}.` };
  }
}

/** Initial size from the upgrade URL; absent or absurd values fall back to a sane default. */
export function sizeFromQuery(params: URLSearchParams): { cols: number; rows: number } {
  const cols = Number(params.get('cols'));
  const rows = Number(params.get('rows'));
  return validSize(cols, rows) ? { cols, rows } : { cols: 80, rows: 24 };
}
