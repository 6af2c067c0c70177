/**
 * Output batching: many small pty reads become few large WebSocket frames, without delaying a
 * lone keystroke echo.
 *
 * The browser pays per frame (a message event, a write into xterm, a parse, a render request),
 * and a pty hands out a few KiB per read, so `seq 1 5000000` arrived as ~14,000 frames. Here:
 *   - idle (nothing sent within the last `windowMs`): a chunk goes out at once, so an echo or a
 *     prompt is never held back by a timer;
 *   - busy (a frame went out within `windowMs`): chunks are gathered and sent together when the
 *     window ends, or at once when `maxBytes` are waiting;
 *   - a window that ends with nothing gathered makes the batcher idle again;
 *   - input from the learner (inputArrived) sends what is gathered and, for `afterInputMs`, every
 *     chunk at once: what follows a keystroke is most likely its answer (the echo, the prompt
 *     after Ctrl-C), and the learner is waiting for it. During a flood a window's hold put up to
 *     `windowMs` between Ctrl-C and its prompt (6.6 ms against wetty's 3.1, issue 15).
 * Pure bookkeeping over a `send` callback and a timer, so it is tested without a pty or a socket.
 */
import { FLOW } from './protocol.ts';

export class OutputBatcher {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Until this time (Date.now()) chunks are not gathered: input came in just before. */
  private answerUntil = 0;

  constructor(
    private readonly send: (frame: Buffer) => void,
    private readonly maxBytes: number = FLOW.batchMaxBytes,
    private readonly windowMs: number = FLOW.batchWindowMs,
    private readonly afterInputMs: number = FLOW.batchAfterInputMs,
  ) {}

  /** Bytes gathered and not yet sent. */
  get waiting(): number {
    return this.pendingBytes;
  }

  push(chunk: Buffer): void {
    if (this.closed || chunk.length === 0) return;
    if (this.timer === null) {
      // Idle: out at once, and open a window in which what follows is gathered.
      this.send(chunk);
      this.openWindow();
      return;
    }
    if (this.answerUntil > Date.now()) {
      // Nothing is waiting (inputArrived flushed it): out at once, in order.
      this.send(chunk);
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= this.maxBytes) this.flush();
  }

  /** The learner typed: what was gathered goes now, and what comes next for a moment goes at once. */
  inputArrived(): void {
    if (this.closed) return;
    this.answerUntil = Date.now() + this.afterInputMs;
    this.flush();
  }

  /** Sends what is gathered now (before a control frame that must come after it, at exit). */
  flush(): void {
    if (this.pendingBytes === 0) return;
    const frame = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.send(frame);
  }

  /** Drops what is gathered and stops the timer; later pushes are ignored. */
  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private openWindow(): void {
    this.timer = setTimeout(() => this.windowEnded(), this.windowMs);
  }

  private windowEnded(): void {
    this.timer = null;
    if (this.closed || this.pendingBytes === 0) return;
    this.flush();
    this.openWindow();
  }
}
