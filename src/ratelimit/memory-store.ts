// In-process fixed-window counter: exact for one process, O(1) per hit, memory bounded by the buckets
// active in the last two windows.
import type { Clock } from '../lib/clock.js';
import { RATE_LIMIT, RATE_WINDOW_MS } from '../limits.js';
import { checkLimit, decide, type RateDecision, type RateLimiter } from './policy.js';

type Bucket = { start: number; count: number };

export class MemoryStore {
  private readonly buckets = new Map<string, Bucket>();
  private nextSweep = -Infinity;

  /** Counts one request at `now` (ms epoch, from the caller's clock). */
  hit(bucket: string, limit: number, now: number): RateDecision {
    // Sweeping on access, paced by the injected clock, keeps the hot path timer-free and testable.
    if (now >= this.nextSweep) this.sweep(now);
    let b = this.buckets.get(bucket);
    if (b === undefined) {
      b = { start: now, count: 0 };
      this.buckets.set(bucket, b);
    } else if (now >= b.start + RATE_WINDOW_MS) {
      // Reuse the object: no allocation for a returning key.
      b.start = now;
      b.count = 0;
    }
    const msLeft = b.start + RATE_WINDOW_MS - now;
    if (b.count >= limit) return decide(false, limit, b.count, msLeft);
    b.count++;
    return decide(true, limit, b.count, msLeft);
  }

  /** Drops buckets whose window has closed; runs at most once per window. */
  sweep(now: number): void {
    for (const [k, b] of this.buckets) if (now >= b.start + RATE_WINDOW_MS) this.buckets.delete(k);
    this.nextSweep = now + RATE_WINDOW_MS;
  }

  get size(): number {
    return this.buckets.size;
  }

  clear(): void {
    this.buckets.clear();
  }
}

export function createMemoryLimiter(opts: { clock: Clock }): RateLimiter {
  const { clock } = opts;
  const store = new MemoryStore();
  return {
    hit(bucket: string, limit: number = RATE_LIMIT): RateDecision | Promise<RateDecision> {
      // Synchronous: no promise per hit on the hot path; a bad limit still surfaces as a rejection.
      try {
        checkLimit(limit);
      } catch (err) {
        return Promise.reject(err);
      }
      return store.hit(bucket, limit, clock.now());
    },
    mode: 'memory',
    async close() {
      store.clear();
    },
  };
}
