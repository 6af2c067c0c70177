/**
 * Output flow control by acknowledged bytes: pause the pty when the client is too far behind,
 * resume when it has caught up. Pure bookkeeping, so it is tested without a pty.
 */
import { FLOW } from './protocol.ts';

export interface Pausable {
  pause(): void;
  resume(): void;
}

export class FlowController {
  private sent = 0;
  private acked = 0;
  private paused = false;

  constructor(
    private readonly target: Pausable,
    private readonly high = FLOW.highWatermark,
    private readonly low = FLOW.lowWatermark,
  ) {}

  get unacknowledged(): number {
    return this.sent - this.acked;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  onSent(bytes: number): void {
    this.sent += bytes;
    if (!this.paused && this.unacknowledged > this.high) {
      this.paused = true;
      this.target.pause();
    }
  }

  /** `total` is the client's running count of rendered bytes; stale or bogus counts are clamped. */
  onAck(total: number): void {
    this.acked = Math.min(Math.max(this.acked, total), this.sent);
    if (this.paused && this.unacknowledged < this.low) {
      this.paused = false;
      this.target.resume();
    }
  }
}
