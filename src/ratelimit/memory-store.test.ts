import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../lib/clock.js';
import { MemoryStore, createMemoryLimiter } from './memory-store.js';
import { limiterContract } from './limiter-contract.js';
import { RATE_WINDOW_MS } from '../limits.js';

describe('memory limiter', () => {
  limiterContract((clock) => createMemoryLimiter({ clock }));

  it('reports mode memory', async () => {
    const limiter = createMemoryLimiter({ clock: new ManualClock(0) });
    await limiter.hit('k');
    assert.equal(limiter.mode, 'memory');
  });

  it('forgets closed windows so the map cannot grow without bound', () => {
    const store = new MemoryStore();
    let now = 1_000_000;
    for (let i = 0; i < 1000; i++) store.hit(`old${i}`, 60, now);
    assert.equal(store.size, 1000);
    now += RATE_WINDOW_MS / 2;
    for (let i = 0; i < 10; i++) store.hit(`mid${i}`, 60, now);
    now += RATE_WINDOW_MS / 2; // old windows closed; mid still open
    store.hit('new', 60, now);
    assert.equal(store.size, 11);
    now += RATE_WINDOW_MS; // everything before closed
    store.hit('newer', 60, now);
    assert.equal(store.size, 1);
  });
});
