/**
 * Wrong-token guesses, as a leaky bucket: a burst of mistakes is fine (a stale tab retrying), a
 * stream of them is a guesser. While the bucket is full a wrong token gets 429 instead of 401;
 * the right token always passes (issue 36: a learner's wrong tokens at another seat's runner
 * locked its owner out). What keeps guessing hopeless is the token's size (at least 128 bits,
 * security.ts); the bucket keeps a guesser's noise cheap. Pure bookkeeping over an injectable clock.
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

  /** No wrong guess left in the bucket. */
  empty(): boolean {
    this.drain();
    return this.level === 0;
  }
}

/**
 * One bucket per source (the client's address): one client's wrong tokens or codes never put
 * another on hold. At most `maxSources` buckets are kept; over that the emptiest goes first.
 */
export class GuessLimiters {
  readonly #buckets = new Map<string, GuessLimiter>();

  constructor(
    private readonly burst: number = GUESS_LIMIT.burst,
    private readonly leakMs: number = GUESS_LIMIT.leakMs,
    private readonly maxSources = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds `source` waits before its next attempt counts, or 0. */
  blockedFor(source: string): number {
    return this.#buckets.get(source)?.blockedFor() ?? 0;
  }

  wrongGuess(source: string): void {
    let bucket = this.#buckets.get(source);
    if (!bucket) {
      if (this.#buckets.size >= this.maxSources) this.#forgetCalmest();
      bucket = new GuessLimiter(this.burst, this.leakMs, this.now);
      this.#buckets.set(source, bucket);
    }
    bucket.wrongGuess();
  }

  #forgetCalmest(): void {
    // Buckets that drained are forgotten; if none has, the oldest (insertion order) goes.
    for (const [k, b] of this.#buckets) if (b.blockedFor() === 0 && b.empty()) this.#buckets.delete(k);
    if (this.#buckets.size >= this.maxSources) this.#buckets.delete(this.#buckets.keys().next().value!);
  }
}
