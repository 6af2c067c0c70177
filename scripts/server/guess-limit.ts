/**
 * Wrong-token guesses per runner, as a leaky bucket: a burst of mistakes is fine (a stale tab
 * retrying), a stream of them is a guesser. While the bucket is full every request that
 * carries a token gets 429 before its token is compared, the right one included, so guessing
 * gains nothing by going faster. Pure bookkeeping over an injectable clock.
 */
export const GUESS_LIMIT = {
  /** Wrong tokens allowed back to back. */
  burst: 20,
  /** One more wrong token is allowed per this many ms. */
  leakMs: 500,
} as const;

export class GuessLimiter {
  private level = 0;
  private at: number;

  constructor(
    private readonly burst: number = GUESS_LIMIT.burst,
    private readonly leakMs: number = GUESS_LIMIT.leakMs,
    private readonly now: () => number = Date.now,
  ) {
    this.at = now();
  }

  private drain(): void {
    const t = this.now();
    this.level = Math.max(0, this.level - (t - this.at) / this.leakMs);
    this.at = t;
  }

  /** Seconds to wait before a token is compared again, or 0 when one may be compared now. */
  blockedFor(): number {
    this.drain();
    const over = this.level - (this.burst - 1);
    return over > 0 ? Math.max(1, Math.ceil((over * this.leakMs) / 1000)) : 0;
  }

  wrongGuess(): void {
    this.drain();
    this.level = Math.min(this.level + 1, this.burst);
  }
}
