/**
 * The last few hundred KiB a terminal printed, so a viewer who arrives late sees the screen as
 * it is: replaying the tail into a fresh xterm redraws it (a full-screen program repaints, a
 * shell's recent lines come back). Bounded: the oldest chunks go first.
 */
export const REPLAY_BYTES = 256 * 1024;

export class ReplayBuffer {
  private chunks: Buffer[] = [];
  private total = 0;

  constructor(private readonly max = REPLAY_BYTES) {}

  get bytes(): number {
    return this.total;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    // One chunk larger than the whole buffer: keep its tail only.
    const piece = chunk.length > this.max ? chunk.subarray(chunk.length - this.max) : chunk;
    this.chunks.push(piece);
    this.total += piece.length;
    while (this.total > this.max) {
      const first = this.chunks[0];
      const over = this.total - this.max;
      if (first.length <= over) {
        this.chunks.shift();
        this.total -= first.length;
      } else {
        this.chunks[0] = first.subarray(over);
        this.total -= over;
      }
    }
  }

  /** Everything kept, oldest first, as one buffer (empty when nothing was printed). */
  contents(): Buffer {
    return Buffer.concat(this.chunks, this.total);
  }
}
