// Batched dispatch on SQLite (pipelined claims, group-committed outcomes): two workers on one database file never
// send a row twice within a lease, failures keep the spec schedule (the clock is moved, never slept), and a worker
// that dies after the POST was answered but before its outcome was written leaves a claim that lapses, so the
// delivery is sent again (at least once).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { createDispatcher } from './dispatcher.js';
import {
  attemptsOf,
  deliveriesWhere,
  deliveryOf,
  MIN,
  neverSlow,
  receiver,
  seed,
  type Hit,
} from './testing/dispatcher.js';

const countBy = (hits: Hit[]) => {
  const m = new Map<string, number>();
  for (const h of hits)
    m.set(String(h.headers['x-service-event-id']), (m.get(String(h.headers['x-service-event-id'])) ?? 0) + 1);
  return m;
};

describe('batched webhook dispatch (SQLite, two connections to one file)', () => {
  let dir: string;
  let db: Db;
  let db2: Db;
  let agent: Agent;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-dispatch-batch-'));
    db = await openDb(`sqlite:${path.join(dir, 'db.sqlite')}`);
    db2 = await openDb(`sqlite:${path.join(dir, 'db.sqlite')}`, { migrate: false });
    agent = new Agent();
  });
  after(async () => {
    await agent.close();
    await db2.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('two workers send each due row once per attempt, and failures are due again on the schedule', async () => {
    await db.kysely.deleteFrom('delivery_attempts').execute();
    await db.kysely.deleteFrom('deliveries').execute();
    let answer = 500;
    const rx = await receiver((_q, res) => {
      res.statusCode = answer;
      res.end('x');
    });
    const clock = new ManualClock();
    const opts = { clock, agent, allowPrivateNetwork: true, batchSize: 25, concurrency: 8, ...neverSlow };
    const a = createDispatcher({ ...opts, db, workerId: 'worker-a' });
    const b = createDispatcher({ ...opts, db: db2, workerId: 'worker-b' });
    try {
      const s = await seed(db, clock, rx.url, 300);
      const t1 = clock.now();
      const both = async () => (await Promise.all([a.runOnce(), b.runOnce()])).reduce((x, y) => x + y, 0);
      assert.equal(await both(), 300);
      assert.equal(rx.hits.length, 300);
      assert.ok(
        [...countBy(rx.hits).values()].every((n) => n === 1),
        'first attempt received exactly once',
      );
      const failed = await deliveriesWhere(db, 'hook_id', s.hookId);
      assert.ok(
        failed.every(
          (r) => r.status === 'retrying' && r.attempts === 1 && r.next_attempt_at === t1 + MIN && r.claimed_by === null,
        ),
        'each failure recorded once, due again in 1 minute, the claim cleared',
      );

      clock.advance(MIN - 1);
      assert.equal(await both(), 0, 'nothing is due before the second slot');
      answer = 200;
      clock.advance(1);
      assert.equal(await both(), 300);
      const counts = countBy(rx.hits);
      assert.deepEqual(new Set(counts.keys()), new Set(s.eventIds));
      assert.ok(
        [...counts.values()].every((n) => n === 2),
        'second attempt received exactly once',
      );

      const atts = await db.kysely
        .selectFrom('delivery_attempts as t')
        .innerJoin('deliveries as d', 'd.id', 't.delivery_id')
        .select(['t.delivery_id', 't.attempt', 't.worker', 't.status_code', 'd.status', 'd.attempts'])
        .where('d.hook_id', '=', s.hookId)
        .execute();
      assert.equal(atts.length, 600);
      assert.equal(new Set(atts.map((x) => `${x.delivery_id}#${x.attempt}`)).size, 600, 'no duplicate attempt rows');
      assert.ok(
        atts.every((x) => x.status === 'succeeded' && x.attempts === 2),
        'every row succeeded at its second attempt',
      );
      assert.deepEqual(new Set(atts.filter((x) => x.attempt === 1).map((x) => x.status_code)), new Set([500]));
      const workers = new Set(atts.map((x) => x.worker));
      assert.ok(workers.has('worker-a') && workers.has('worker-b'), 'both workers took part');
    } finally {
      await a.stop();
      await b.stop();
      await rx.close();
    }
  });

  test('a worker gone after the POST was answered, before the record: the lease lapses and it is sent again', async () => {
    const rx = await receiver();
    const clock = new ManualClock();
    const s = await seed(db, clock, rx.url, 3);
    // The outcome never reaches the database: every write transaction of this worker fails, as if it had died.
    const dead: Db = {
      ...db,
      kysely: new Proxy(db.kysely, {
        get(target, p) {
          if (p === 'transaction') return () => ({ execute: () => Promise.reject(new Error('worker died')) });
          const v = Reflect.get(target, p) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      }),
    };
    const a = createDispatcher({ db: dead, clock, workerId: 'dying', agent, allowPrivateNetwork: true });
    const b = createDispatcher({ db: db2, clock, workerId: 'survivor', agent, allowPrivateNetwork: true });
    try {
      assert.equal(await a.runOnce(), 3);
      assert.equal(rx.hits.length, 3, 'answered 200 three times');
      for (const id of s.eventIds) {
        const row = await deliveryOf(db, id);
        assert.deepEqual([row.status, row.attempts, row.claimed_by], ['pending', 0, 'dying'], 'nothing recorded');
      }
      clock.advance(60_000 - 1);
      assert.equal(await b.runOnce(), 0, 'the claim has not lapsed yet');
      clock.advance(1);
      assert.equal(await b.runOnce(), 3);
      assert.equal(rx.hits.length, 6);
      const counts = countBy(rx.hits);
      assert.ok(
        s.eventIds.every((id) => counts.get(id) === 2),
        'each event delivered again, same event id',
      );
      const of = (id: string) => rx.hits.filter((h) => h.headers['x-service-event-id'] === id);
      assert.ok(
        s.eventIds.every((id) => of(id)[0]!.raw.equals(of(id)[1]!.raw)),
        'the same body byte for byte',
      );
      for (const id of s.eventIds) {
        const row = await deliveryOf(db, id);
        assert.deepEqual([row.status, row.attempts, row.claimed_by], ['succeeded', 1, null]);
        const atts = await attemptsOf(db, row.id);
        assert.deepEqual(
          atts.map((x) => [x.attempt, x.worker, x.status_code]),
          [[1, 'survivor', 200]],
        );
      }
    } finally {
      await a.stop();
      await b.stop();
      await rx.close();
    }
  });
});
