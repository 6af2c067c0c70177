/**
 * Terminal input, written to the pty master without ever blocking the event loop.
 *
 * node-pty (the @lydell build we use) writes through a tty stream; when the pty's input queue
 * is full (a large paste, the shell busy echoing output nobody reads yet) that write retries on
 * the main thread until the kernel takes the bytes, and the kernel never does, because the
 * output side is read by that same, now stuck, thread. Upstream node-pty replaced that path with
 * its own queue over the non-blocking fd. We do the same here: the master fd is O_NONBLOCK, so
 * a write takes what fits and answers EAGAIN for the rest; the rest waits in a queue and is
 * retried on a timer (not setImmediate: a retry per loop turn against a stalled reader is
 * itself a busy loop). The queue size is reported so the socket can stop reading input.
 */
import { writeSync } from 'node:fs';

export const PTY_INPUT = {
  /** Most bytes written in one loop turn, so a paste cannot hog the thread either. */
  bytesPerTurn: 64 * 1024,
  /** First retry after EAGAIN; doubles up to maxRetryMs while the pty stays full. */
  minRetryMs: 2,
  maxRetryMs: 50,
} as const;

export interface PtyInputOptions {
  /** Writes what fits; the default is fs.writeSync on the (non-blocking) fd. */
  writeSome?: (fd: number, buf: Buffer) => number;
}

export class PtyInput {
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private retryMs: number = PTY_INPUT.minRetryMs;
  private closed = false;
  private readonly writeSome: (fd: number, buf: Buffer) => number;

  constructor(
    private readonly fd: number,
    opts: PtyInputOptions = {},
  ) {
    this.writeSome = opts.writeSome ?? ((f, b) => writeSync(f, b));
  }

  /** Bytes accepted but not yet taken by the pty. */
  get queued(): number {
    return this.queuedBytes;
  }

  write(data: string | Buffer): void {
    if (this.closed || data.length === 0) return;
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.queue.push(buf);
    this.queuedBytes += buf.length;
    if (!this.timer) this.flush();
  }

  /** Drops what is still queued (Ctrl-C during a paste); returns how many bytes were dropped. */
  discard(): number {
    const dropped = this.queuedBytes;
    this.queue.length = 0;
    this.queuedBytes = 0;
    return dropped;
  }

  /** Drops what is queued; later writes are ignored. Safe to call twice. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
    this.queuedBytes = 0;
  }

  private flush(): void {
    this.timer = null;
    let budget: number = PTY_INPUT.bytesPerTurn;
    while (!this.closed && this.queue.length > 0 && budget > 0) {
      const head = this.queue[0];
      const piece = head.length > budget ? head.subarray(0, budget) : head;
      let n: number;
      try {
        n = this.writeSome(this.fd, piece);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EINTR') {
          this.schedule(this.retryMs);
          this.retryMs = Math.min(this.retryMs * 2, PTY_INPUT.maxRetryMs);
          return;
        }
        // EIO/EBADF: the shell is gone; its exit is reported elsewhere.
        this.close();
        return;
      }
      this.retryMs = PTY_INPUT.minRetryMs;
      budget -= n;
      this.queuedBytes -= n;
      if (n >= head.length) this.queue.shift();
      else this.queue[0] = head.subarray(n);
    }
    if (this.closed) return;
    if (this.queue.length > 0) this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => this.flush(), ms);
  }
}
