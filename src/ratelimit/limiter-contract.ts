// Behaviour every RateLimiter must show, run against each store by its test file, so stores cannot drift apart.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../lib/clock.js';
import { RATE_LIMIT, RATE_WINDOW_MS } from '../limits.js';
import type { RateLimiter } from './policy.js';

export type MakeLimiter = (clock: ManualClock) => Promise<RateLimiter> | RateLimiter;

// An odd start time, 45 s past a minute boundary: a limiter aligning windows to the wall clock would reset early.
const T0 = 1_767_225_645_123;

export function limiterContract(make: MakeLimiter): void {
  async function setup() {
    const clock = new ManualClock(T0);
    const limiter = await make(clock);
    return { clock, limiter };
  }

  it('admits 60 with remaining 59..0, then refuses the 61st with retryAfter', async () => {
    const { limiter } = await setup();
    try {
      for (let i = 1; i <= RATE_LIMIT; i++) {
        const d = await limiter.hit('k');
        assert.deepEqual(d, { allowed: true, limit: 60, remaining: 60 - i, resetSeconds: 60 }, `hit ${i}`);
      }
      const refused = await limiter.hit('k');
      assert.deepEqual(refused, { allowed: false, limit: 60, remaining: 0, resetSeconds: 60, retryAfterSeconds: 60 });
    } finally {
      await limiter.close();
    }
  });

  it('reports seconds to reset rounded up, at least 1, as the clock moves', async () => {
    const { clock, limiter } = await setup();
    try {
      assert.equal((await limiter.hit('k')).resetSeconds, 60);
      clock.advance(10_500);
      assert.equal((await limiter.hit('k')).resetSeconds, 50); // 49.5 s left
      clock.advance(-500 + 1); // 10 001 ms in: 49.999 s left
      assert.equal((await limiter.hit('k')).resetSeconds, 50);
      clock.set(T0 + 20_000);
      assert.equal((await limiter.hit('k')).resetSeconds, 40);
      clock.set(T0 + RATE_WINDOW_MS - 1);
      const last = await limiter.hit('k');
      assert.equal(last.resetSeconds, 1);
      assert.equal(last.remaining, 55);
    } finally {
      await limiter.close();
    }
  });

  it('keeps the window fixed: opens on the first request and reopens exactly 60 s later', async () => {
    const { clock, limiter } = await setup();
    try {
      for (let i = 0; i < 60; i++) await limiter.hit('k');
      clock.advance(20_000); // crosses a wall-clock minute boundary
      const mid = await limiter.hit('k');
      assert.equal(mid.allowed, false);
      assert.equal(mid.retryAfterSeconds, 40);
      clock.set(T0 + RATE_WINDOW_MS - 1);
      const edge = await limiter.hit('k');
      assert.equal(edge.allowed, false);
      assert.equal(edge.retryAfterSeconds, 1);
      clock.set(T0 + RATE_WINDOW_MS);
      const reopened = await limiter.hit('k');
      assert.deepEqual(reopened, { allowed: true, limit: 60, remaining: 59, resetSeconds: 60 });
      // The new window starts at this request, not at the end of the old one plus anything.
      clock.advance(RATE_WINDOW_MS - 1);
      assert.equal((await limiter.hit('k')).remaining, 58);
      clock.advance(1);
      assert.equal((await limiter.hit('k')).remaining, 59);
    } finally {
      await limiter.close();
    }
  });

  it('does not count refused requests', async () => {
    const { clock, limiter } = await setup();
    try {
      // Lowering then raising the limit inside one window exposes a counter that counts refusals.
      for (let i = 0; i < 5; i++) assert.equal((await limiter.hit('k', 5)).allowed, true);
      for (let i = 0; i < 10; i++) assert.equal((await limiter.hit('k', 5)).allowed, false);
      const d = await limiter.hit('k', 10);
      assert.deepEqual(d, { allowed: true, limit: 10, remaining: 4, resetSeconds: 60 });

      // Refusals in one window leave the next window its full allowance.
      clock.advance(RATE_WINDOW_MS);
      for (let i = 0; i < 60; i++) await limiter.hit('k');
      for (let i = 0; i < 30; i++) assert.equal((await limiter.hit('k')).allowed, false);
      clock.advance(RATE_WINDOW_MS);
      let admitted = 0;
      for (let i = 0; i < 61; i++) if ((await limiter.hit('k')).allowed) admitted++;
      assert.equal(admitted, 60);
    } finally {
      await limiter.close();
    }
  });

  it('keeps one bucket per key', async () => {
    const { clock, limiter } = await setup();
    try {
      for (let i = 0; i < 60; i++) await limiter.hit('a');
      assert.equal((await limiter.hit('a')).allowed, false);
      clock.advance(30_000);
      const b = await limiter.hit('b');
      assert.deepEqual(b, { allowed: true, limit: 60, remaining: 59, resetSeconds: 60 });
      assert.equal((await limiter.hit('a')).allowed, false);
      clock.advance(30_000); // a's window closes, b's is half way
      assert.equal((await limiter.hit('a')).remaining, 59);
      const b2 = await limiter.hit('b');
      assert.equal(b2.remaining, 58);
      assert.equal(b2.resetSeconds, 30);
    } finally {
      await limiter.close();
    }
  });

  it('honours a per-call limit override', async () => {
    const { limiter } = await setup();
    try {
      for (let i = 1; i <= 5; i++) {
        assert.deepEqual(await limiter.hit('k', 5), { allowed: true, limit: 5, remaining: 5 - i, resetSeconds: 60 });
      }
      assert.deepEqual(await limiter.hit('k', 5), {
        allowed: false,
        limit: 5,
        remaining: 0,
        resetSeconds: 60,
        retryAfterSeconds: 60,
      });
      const big = await limiter.hit('big', 1000);
      assert.equal(big.limit, 1000);
      assert.equal(big.remaining, 999);
    } finally {
      await limiter.close();
    }
  });

  it('rejects a nonsensical limit', async () => {
    const { limiter } = await setup();
    try {
      await assert.rejects(async () => limiter.hit('k', 0), RangeError);
      await assert.rejects(async () => limiter.hit('k', 1.5), RangeError);
      await assert.rejects(async () => limiter.hit('k', Number.NaN), RangeError);
    } finally {
      await limiter.close();
    }
  });
}
