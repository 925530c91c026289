// Redis-backed limiter: one shared, atomic counter per bucket across all instances (one EVALSHA per hit).
// If Redis is unreachable it degrades to the same policy per instance, answering without waiting on Redis.
import { Redis } from 'ioredis';
import type { Clock } from '../lib/clock.js';
import { MemoryStore } from './memory-store.js';
import { RATE_LIMIT, RATE_WINDOW_MS } from '../limits.js';
import type { Logger } from '../lib/logger.js';
import { checkLimit, decide, type RateDecision, type RateLimiter } from './policy.js';

/** Extra key lifetime past the window end, so a slow clock or in-flight hit never sees a vanished bucket. */
const TTL_SLACK_MS = 5_000;
const CONNECT_TIMEOUT_MS = 1_000;
export const COMMAND_TIMEOUT_MS = 300;
const RECONNECT_CAP_MS = 1_000;
export const DEFAULT_BREAKER_COOLDOWN_MS = 2_000;

// The window start comes from the caller's clock (ARGV[1]), never Redis TIME, so all instances and tests
// share one notion of time. ARGV[1] is stored verbatim: Lua 5.1 number formatting could round it.
// Returns {admitted 0|1, admitted count, ms left in window}.
const HIT_LUA = `
local now = tonumber(ARGV[1])
local win = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 's', 'c')
local s = v[1]
local start = tonumber(s)
local count = tonumber(v[2])
if start == nil or count == nil or now >= start + win then
  s = ARGV[1]
  start = now
  count = 0
end
local left = start + win - now
if left > win then
  left = win -- another instance's clock runs ahead; never report more than one window
end
if count >= limit then
  return {0, count, left}
end
count = count + 1
redis.call('HSET', KEYS[1], 's', s, 'c', count)
redis.call('PEXPIRE', KEYS[1], left + tonumber(ARGV[4]))
return {1, count, left}
`;

type HitReply = [number, number, number];
type ScriptedRedis = Redis & {
  signetRateHit(key: string, now: number, windowMs: number, limit: number, slackMs: number): Promise<HitReply>;
};

export type RedisLimiter = RateLimiter & {
  /**
   * Resolves true once the connection is ready, false after `timeoutMs`: for a caller that needs the shared store
   * beyond the first connection attempt's bounded wait (a test asserting counts in Redis on a loaded machine).
   */
  connected(timeoutMs: number): Promise<boolean>;
};

export function createRedisLimiter(opts: {
  url: string;
  clock: Clock;
  prefix?: string;
  logger?: Logger;
  breakerCooldownMs?: number;
  /** How long one command may take before the breaker opens; tests on a loaded machine set it longer. */
  commandTimeoutMs?: number;
}): RedisLimiter {
  const { clock, logger } = opts;
  const prefix = opts.prefix ?? 'signet:ratelimit:';
  const cooldownMs = opts.breakerCooldownMs ?? DEFAULT_BREAKER_COOLDOWN_MS;
  const fallback = new MemoryStore();

  const client = new Redis(opts.url, {
    // Fail fast instead of queueing: a dead Redis must cost a request nothing.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
    // Keep reconnecting in the background forever, so Redis is picked up again once it is back.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), RECONNECT_CAP_MS),
  }) as ScriptedRedis;
  client.defineCommand('signetRateHit', { numberOfKeys: 1, lua: HIT_LUA });

  let mode: 'redis' | 'fallback' = 'redis';
  let down = false;
  let closed = false;
  /** Clock time before which a hit skips Redis after a failed command (the breaker is open). */
  let openUntil = -Infinity;

  const markDown = (reason: string) => {
    if (down || closed) return;
    down = true;
    logger?.warn({ component: 'ratelimit', reason }, 'Redis unavailable; enforcing rate limits per instance');
  };
  const markUp = () => {
    down = false;
    logger?.info({ component: 'ratelimit' }, 'Redis available again; shared rate limits restored');
  };
  // Without an 'error' listener ioredis prints every failed reconnect; connection errors only flip state.
  client.on('error', (err: Error) => markDown(errReason(err)));

  // Until the first connection attempt settles, a hit waits for it (bounded) so boot-time hits are shared, not local.
  // The bound starts at the first hit, not here: a start-up that keeps the event loop busy after creating the limiter
  // (compiling routes on a loaded machine) would otherwise use it up before the connection's events were read.
  let firstAttemptSettled = false;
  const onFirstSettled = () => {
    firstAttemptSettled = true;
    client.off('ready', onFirstSettled).off('error', onFirstSettled).off('close', onFirstSettled);
  };
  client.once('ready', onFirstSettled).once('error', onFirstSettled).once('close', onFirstSettled);
  let starting: Promise<void> | null = null;
  const firstAttempt = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done).off('error', done).off('close', done);
        resolve();
      };
      const timer = setTimeout(done, CONNECT_TIMEOUT_MS + 100);
      timer.unref();
      client.once('ready', done).once('error', done).once('close', done);
    });

  async function hit(bucket: string, limit: number = RATE_LIMIT): Promise<RateDecision> {
    checkLimit(limit);
    if (!firstAttemptSettled) await (starting ??= firstAttempt());
    const now = clock.now();
    // Status check is free: anything but 'ready' would fail anyway, so don't even try.
    if (client.status !== 'ready') {
      markDown(`connection ${client.status}`);
    } else if (now >= openUntil) {
      try {
        const [admitted, count, msLeft] = await client.signetRateHit(
          prefix + bucket,
          now,
          RATE_WINDOW_MS,
          limit,
          TTL_SLACK_MS,
        );
        if (down) markUp();
        mode = 'redis';
        return decide(admitted === 1, limit, count, msLeft);
      } catch (err) {
        // A timeout costs up to commandTimeout; the cool-down stops every request from paying it again.
        openUntil = now + cooldownMs;
        markDown(errReason(err));
      }
    }
    mode = 'fallback';
    return fallback.hit(bucket, limit, now);
  }

  return {
    hit,
    get mode() {
      return mode;
    },
    connected(timeoutMs) {
      if (client.status === 'ready') return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const settle = (ok: boolean) => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(ok);
        };
        const onReady = () => settle(true);
        const timer = setTimeout(() => settle(client.status === 'ready'), timeoutMs);
        client.on('ready', onReady);
      });
    },
    async close() {
      // Idempotent: a second QUIT on a closing socket would linger until the socket times out.
      if (closed) return;
      closed = true;
      fallback.clear();
      if (client.status === 'ready') {
        try {
          await client.quit();
          return;
        } catch {
          // fall through to a hard disconnect
        }
      }
      client.disconnect();
    },
  };
}

/** Error text without anything caller-supplied (keys, URLs with credentials). */
function errReason(err: unknown): string {
  if (err instanceof Error) return (err as NodeJS.ErrnoException).code ?? err.message.slice(0, 120);
  return 'unknown error';
}
