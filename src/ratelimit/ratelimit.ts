// API rate limiter entry point: 60 requests per fixed 60 s window per API key, shared through Redis when
// configured, per-instance otherwise (and while Redis is down); a hit never throws for infrastructure reasons.
import type { Clock } from '../lib/clock.js';
import { createMemoryLimiter } from './memory-store.js';
import type { Logger } from '../lib/logger.js';
import type { RateLimiter } from './policy.js';

export type { RateDecision, RateLimiter } from './policy.js';
export { createMemoryLimiter, MemoryStore } from './memory-store.js';

/** Redis-backed when a URL is configured (ioredis loads only then), in-process otherwise. */
export async function createRateLimiter(opts: {
  redisUrl: string | null;
  clock: Clock;
  prefix?: string;
  logger?: Logger;
}): Promise<RateLimiter> {
  if (opts.redisUrl) {
    const { createRedisLimiter } = await import('./redis-store.js');
    return createRedisLimiter({ url: opts.redisUrl, clock: opts.clock, prefix: opts.prefix, logger: opts.logger });
  }
  return createMemoryLimiter({ clock: opts.clock });
}
