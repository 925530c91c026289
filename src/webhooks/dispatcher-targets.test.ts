// One slow receiver does not hold a worker's lanes (targets.ts): a hanging receiver's requests let go of their lanes
// after slowMs, its deliveries beyond its share are deferred without an attempt, spread over the time it could take,
// and other receivers' deliveries go out meanwhile. A deferral is guarded by the claim like every other outcome. Real
// receivers on 127.0.0.1; the schedule's clock is moved, never slept; the hanging requests end by their own timeout.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { WEBHOOK_DEFER_MAX_MS, WEBHOOK_SLOW_TARGET_IN_FLIGHT } from '../limits.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { claimDue, recordOutcomes } from './deliveries.repo.js';
import { attemptsOf, db, deliveryOf, dispatcher, receiver, seed, useDispatcherDb } from './testing/dispatcher.js';

const TIMEOUT = 4_000;
const CAP = WEBHOOK_SLOW_TARGET_IN_FLIGHT;

describe('a slow receiver and the lanes (SQLite)', () => {
  useDispatcherDb();

  test('a hanging receiver keeps one share of the lanes; the rest of its deliveries are deferred, spread', async () => {
    const hanging = await receiver(() => undefined);
    const healthy = await receiver();
    const clock = new ManualClock();
    try {
      // The hanging receiver's deliveries are the oldest: without the guard every lane would wait on them.
      const stuck = await seed(db, clock, hanging.url, 5 * CAP);
      clock.advance(1);
      const fine = await seed(db, clock, healthy.url, 40);
      const t0 = clock.now();
      // The shipped 1 s: on a loaded machine a healthy request can take tens of ms, and must not count as slow.
      const d = dispatcher(clock, { concurrency: CAP, batchSize: 100, timeoutMs: TIMEOUT });
      const sent = await d.runOnce();

      // Every healthy delivery went out before the hanging requests reached their deadline, each once.
      assert.equal(healthy.hits.length, 40);
      const hangStart = Math.min(...hanging.hits.map((h) => h.at));
      const healthyEnd = Math.max(...healthy.hits.map((h) => h.at));
      assert.ok(healthyEnd < hangStart + TIMEOUT, `healthy done ${healthyEnd - hangStart} ms after the first hang`);
      for (const id of fine.eventIds) assert.equal((await deliveryOf(db, id)).status, 'succeeded');

      // The hanging receiver got one share of requests; each ended by its timeout and is recorded (runOnce waited).
      assert.equal(hanging.hits.length, CAP);
      assert.equal(sent, 40 + CAP);
      const rows = await Promise.all(stuck.eventIds.map((id) => deliveryOf(db, id)));
      const tried = rows.filter((r) => r.attempts === 1);
      assert.equal(tried.length, CAP);
      for (const r of tried) {
        assert.equal(r.status, 'retrying');
        assert.match(r.last_error ?? '', /^timeout/);
        assert.equal((await attemptsOf(db, r.id)).length, 1);
      }

      // The others were handed back unattempted, due later: CAP at each multiple of the timeout.
      const deferred = rows.filter((r) => r.attempts === 0);
      assert.equal(deferred.length, 4 * CAP);
      const waits = new Map<number, number>();
      for (const r of deferred) {
        assert.equal(r.status, 'pending');
        assert.equal(r.claimed_by, null);
        assert.equal((await attemptsOf(db, r.id)).length, 0);
        const wait = Number(r.next_attempt_at) - t0;
        waits.set(wait, (waits.get(wait) ?? 0) + 1);
      }
      assert.deepEqual(
        [...waits].sort((a, b) => a[0] - b[0]),
        [1, 2, 3, 4].map((k) => [k * TIMEOUT, CAP]),
      );
    } finally {
      await hanging.close();
      await healthy.close();
    }
  });

  test('a stall of the worker itself is not the receiver being slow: nothing is deferred', async () => {
    const STALL = 1_500;
    // The receiver shares this process: its first request blocks the whole event loop, as a long synchronous step
    // would (a SQLite checkpoint's fsync, a starved machine); the requests in flight then look older than slowMs.
    // The shipped slowMs (1 s), so that a loaded machine's ordinary delays never count as slow here.
    const stalled = new Int32Array(new SharedArrayBuffer(4));
    const rx = await receiver((_q, res, hit) => {
      if (rx.hits[0] === hit) Atomics.wait(stalled, 0, 0, STALL);
      res.end('ok');
    });
    const clock = new ManualClock();
    try {
      const s = await seed(db, clock, rx.url, 5 * CAP);
      const d = dispatcher(clock, { concurrency: 2 * CAP, batchSize: 100, timeoutMs: TIMEOUT });
      assert.equal(await d.runOnce(), 5 * CAP, 'every delivery attempted in the first pass');
      assert.equal(rx.hits.length, 5 * CAP);
      for (const id of s.eventIds) {
        const r = await deliveryOf(db, id);
        assert.deepEqual([r.status, r.attempts], ['succeeded', 1]);
      }
    } finally {
      await rx.close();
    }
  });

  test('a slow receiver that answers gets every delivery once; a deferral never counts as an attempt', async () => {
    const slow = await receiver((_q, res) => setTimeout(() => res.end('ok'), 1_500));
    const clock = new ManualClock();
    try {
      const s = await seed(db, clock, slow.url, 3 * CAP);
      const d = dispatcher(clock, { concurrency: 2 * CAP, batchSize: 100, timeoutMs: TIMEOUT, slowMs: 200 });
      let sent = await d.runOnce();
      // The first pass sent one burst and deferred the rest: the slow receiver's share was reached.
      const first = await Promise.all(s.eventIds.map((id) => deliveryOf(db, id)));
      const waiting = first.filter((r) => r.attempts === 0);
      assert.equal(waiting.length, 3 * CAP - sent);
      assert.ok(waiting.length > 0, 'nothing was deferred');
      for (const r of waiting) assert.ok(Number(r.next_attempt_at) > clock.now(), 'a deferred row is due now');
      for (let pass = 0; pass < 10; pass++) {
        clock.advance(WEBHOOK_DEFER_MAX_MS);
        sent += await d.runOnce();
      }
      assert.equal(sent, 3 * CAP);
      const perEvent = new Map<string, number>();
      for (const h of slow.hits) {
        const id = String(h.headers['x-service-event-id']);
        perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
      }
      assert.equal(perEvent.size, 3 * CAP);
      assert.deepEqual(new Set(perEvent.values()), new Set([1]));
      for (const id of s.eventIds) {
        const r = await deliveryOf(db, id);
        assert.equal(r.status, 'succeeded');
        assert.equal(r.attempts, 1);
      }
    } finally {
      await slow.close();
    }
  });
});

const pg = await postgresForTests();
const databases: { name: string; open(): Promise<{ db: Db; drop(): Promise<void> }> }[] = [
  {
    name: 'SQLite',
    open: async () => {
      const d = await openDb('sqlite::memory:');
      return { db: d, drop: () => d.close() };
    },
  },
];
if ('url' in pg) databases.push({ name: 'PostgreSQL', open: () => freshPostgres(pg.url) });

for (const { name, open } of databases) {
  test(`a deferral is written only under the claim it was made with (${name})`, async () => {
    const { db: d, drop } = await open();
    try {
      const clock = new ManualClock();
      const s = await seed(d, clock, 'http://127.0.0.1:9/hook', 2);
      const claimed = await claimDue(d, { now: clock.now(), workerId: 'a', leaseMs: 60_000, limit: 10 });
      assert.equal(claimed.length, 2);
      const defer = (id: string, attempts: number) => ({
        kind: 'defer' as const,
        deliveryId: id,
        attemptsAtClaim: attempts,
        recordedAt: clock.now(),
        nextAttemptAt: clock.now() + 30_000,
      });
      const [x, y] = claimed;
      // Another worker's deferral, and one made with a stale attempt count, change nothing.
      assert.equal(await recordOutcomes(d, 'b', [defer(x!.id, 0)]), 0);
      assert.equal(await recordOutcomes(d, 'a', [defer(y!.id, 1)]), 0);
      assert.equal(await recordOutcomes(d, 'a', [defer(x!.id, 0)]), 1);
      const rows = await Promise.all(s.eventIds.map((id) => deliveryOf(d, id)));
      const [rx, ry] = [rows.find((r) => r.id === x!.id)!, rows.find((r) => r.id === y!.id)!];
      assert.deepEqual(
        [rx.status, rx.attempts, Number(rx.next_attempt_at), rx.claimed_by],
        ['pending', 0, clock.now() + 30_000, null],
      );
      assert.deepEqual(
        [ry.status, ry.attempts, Number(ry.next_attempt_at), ry.claimed_by],
        ['pending', 0, clock.now(), 'a'],
      );
      // The deferred row is not due before its time; then it is.
      assert.equal((await claimDue(d, { now: clock.now(), workerId: 'c', leaseMs: 60_000, limit: 10 })).length, 0);
      clock.advance(30_000);
      const again = await claimDue(d, { now: clock.now(), workerId: 'c', leaseMs: 60_000, limit: 10 });
      assert.deepEqual(
        again.map((c) => c.id),
        [x!.id],
      );
    } finally {
      await drop();
    }
  });
}
