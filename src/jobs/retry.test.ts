import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_MS } from '../limits.js';
import { doubling, fixedDelays, nextAttemptAt } from './retry.js';

const MIN = 60_000;

test("fixed delays: the spec's webhook schedule, then giving up after the 7th attempt", () => {
  const s = fixedDelays(WEBHOOK_RETRY_DELAYS_MS);
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((n) => s(n)),
    [MIN, 5 * MIN, 30 * MIN, 120 * MIN, 360 * MIN, 1440 * MIN],
  );
  assert.equal(WEBHOOK_MAX_ATTEMPTS, 7);
  assert.equal(s(7), null);
  assert.equal(s(0), null);
  assert.equal(nextAttemptAt(s, 1, 1000), 1000 + MIN);
  assert.equal(nextAttemptAt(s, 7, 1000), null);
});

test('doubling: from the first delay up to the cap, never giving up', () => {
  const s = doubling(10_000, 3600_000);
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => s(n)),
    [10_000, 20_000, 40_000, 80_000],
  );
  assert.equal(s(9), 2_560_000);
  assert.equal(s(10), 3600_000);
  assert.equal(s(10_000), 3600_000);
  assert.equal(nextAttemptAt(s, 2, 5), 20_005);
});
