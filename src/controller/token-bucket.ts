// A token bucket on the injected clock: the controller's write rate limit
// (--max-writes-per-second), as client-go's flowcontrol.NewTokenBucketRateLimiter.
//
// Tokens refill continuously at `ratePerSecond` up to `burst`. take() waits (on the clock) for a
// token, or rejects when its signal aborts. Waiters are served in order; the queue is bounded by
// its callers (one worker), so it holds at most a few entries.
import type { Clock } from '../clock/clock.ts';

export class TokenBucket {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #atMs: number;

  constructor(clock: Clock, ratePerSecond: number, burst = Math.max(1, Math.ceil(ratePerSecond))) {
    if (!(ratePerSecond > 0)) throw new RangeError(`maxWritesPerSecond: ${ratePerSecond} must be more than 0`);
    this.#clock = clock;
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this.#tokens = burst;
    this.#atMs = clock.monotonicMs();
  }

  #refill(): void {
    const now = this.#clock.monotonicMs();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#atMs) * this.ratePerSecond) / 1000);
    this.#atMs = now;
  }

  /** Milliseconds until a token is available (0 when one is). */
  waitMs(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil(((1 - this.#tokens) * 1000) / this.ratePerSecond);
  }

  /** Takes one token, waiting for it if needed. */
  async take(signal: AbortSignal): Promise<void> {
    for (;;) {
      const wait = this.waitMs();
      if (wait === 0) {
        this.#tokens -= 1;
        return;
      }
      await this.#clock.sleep(wait, signal);
    }
  }
}
