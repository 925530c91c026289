import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { ManualClock } from '../lib/clock.js';
import { redisForTests, redisTestPrefix } from '../testing/services.js';
import { createRedisLimiter } from './redis-store.js';
import { createRateLimiter } from './ratelimit.js';
import { limiterContract } from './limiter-contract.js';
import { RATE_WINDOW_MS } from '../limits.js';
import type { RateLimiter } from './policy.js';

const redis = await redisForTests();
const skip = 'skip' in redis ? redis.skip : false;
const url = 'url' in redis ? redis.url : '';

describe('redis limiter', { skip }, () => {
  const prefix = redisTestPrefix();
  let admin: Redis;
  const open: RateLimiter[] = [];
  let n = 0;
  // A fresh bucket namespace per limiter so contract tests never see each other's counters. Connected before its
  // first hit: on a loaded machine the boot wait can end first, and those hits would be counted per instance.
  const make = async (clock: ManualClock, p = `${prefix}${n++}:`) => {
    const l = createRedisLimiter({ url, clock, prefix: p, commandTimeoutMs: 10_000 });
    open.push(l);
    assert.ok(await l.connected(10_000), 'the limiter connects to Redis');
    return l;
  };

  before(() => {
    admin = new Redis(url);
  });
  after(async () => {
    await Promise.all(open.map((l) => l.close()));
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
  });

  limiterContract((clock) => make(clock));

  it('serves from Redis and stores one expiring hash per bucket under prefix + bucket id', async () => {
    const p = `${prefix}ttl:`;
    const limiter = await make(new ManualClock(1_000_000), p);
    await limiter.hit('key_abc');
    assert.equal(limiter.mode, 'redis');
    assert.deepEqual(await admin.hgetall(`${p}key_abc`), { s: '1000000', c: '1' });
    const ttl = await admin.pttl(`${p}key_abc`);
    assert.ok(ttl > RATE_WINDOW_MS - 1000 && ttl <= RATE_WINDOW_MS + 5_000, `pttl ${ttl}`);
  });

  it('keeps a 13-digit epoch window start exact', async () => {
    const p = `${prefix}epoch:`;
    const clock = new ManualClock(1_767_225_645_123);
    const limiter = await make(clock, p);
    await limiter.hit('k');
    assert.equal(await admin.hget(`${p}k`, 's'), '1767225645123');
    clock.advance(RATE_WINDOW_MS - 1);
    assert.equal((await limiter.hit('k')).remaining, 58);
    clock.advance(1);
    assert.equal((await limiter.hit('k')).remaining, 59);
  });

  it('shares one counter between instances on the same Redis', async () => {
    const p = `${prefix}shared:`;
    const clock = new ManualClock(5_000_000);
    const a = await make(clock, p);
    const b = await make(clock, p);
    for (let i = 0; i < 30; i++) await a.hit('k');
    const fromB = await b.hit('k');
    assert.equal(fromB.remaining, 29);
    for (let i = 0; i < 29; i++) await b.hit('k');
    assert.equal((await a.hit('k')).allowed, false);
    assert.equal((await b.hit('k')).allowed, false);
    // A window opened by one instance closes for both.
    clock.advance(RATE_WINDOW_MS);
    assert.equal((await b.hit('k')).remaining, 59);
    assert.equal((await a.hit('k')).remaining, 58);
  });

  it('admits exactly the limit under concurrent hits from several instances', async () => {
    const p = `${prefix}race:`;
    const clock = new ManualClock(9_000_000);
    const limiters = await Promise.all([make(clock, p), make(clock, p), make(clock, p), make(clock, p)]);
    await Promise.all(limiters.map((l) => l.hit('warm')));
    const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => limiters[i % 4].hit('k')));
    const admitted = decisions.filter((d) => d.allowed);
    assert.equal(admitted.length, 60);
    assert.deepEqual(
      admitted.map((d) => d.remaining).sort((x, y) => x - y),
      Array.from({ length: 60 }, (_, i) => i),
    );
    assert.ok(
      decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.retryAfterSeconds === 60),
      'decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.retryAfterSeconds === 60)',
    );
    assert.ok(
      limiters.every((l) => l.mode === 'redis'),
      "limiters.every((l) => l.mode === 'redis')",
    );
  });

  it('a start-up that keeps the event loop busy still counts its first hit in Redis', async () => {
    const p = `${prefix}slowboot:`;
    const limiter = createRedisLimiter({ url, clock: new ManualClock(7_000_000), prefix: p });
    open.push(limiter);
    // Longer than the first connection attempt's bounded wait: the app compiling its routes on a loaded machine.
    const until = Date.now() + 1_500;
    while (Date.now() < until);
    assert.deepEqual(await limiter.hit('k'), { allowed: true, limit: 60, remaining: 59, resetSeconds: 60 });
    assert.equal(limiter.mode, 'redis');
    assert.equal(await admin.hget(`${p}k`, 'c'), '1');
  });

  it('createRateLimiter picks Redis when a URL is given and memory otherwise', async () => {
    const clock = new ManualClock(0);
    const r = await createRateLimiter({ redisUrl: url, clock, prefix: `${prefix}pick:` });
    open.push(r);
    await r.hit('k');
    assert.equal(r.mode, 'redis');
    const m = await createRateLimiter({ redisUrl: null, clock });
    await m.hit('k');
    assert.equal(m.mode, 'memory');
    await m.close();
  });
});
