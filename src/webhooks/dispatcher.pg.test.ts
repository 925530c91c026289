import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pgLib from 'pg';
import Stripe from 'stripe';
import { Agent } from 'undici';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { claimDue, recordOutcomes } from './deliveries.repo.js';
import { getDelivery, listDeliveries, replayDelivery } from './hooks.service.js';
import { createDispatcher } from './dispatcher.js';
import { neverSlow, seed } from './testing/dispatcher.js';

const MIN = 60_000;
const PgClient = pgLib.Client;
const pg = await postgresForTests();

type Hit = { headers: http.IncomingHttpHeaders; raw: Buffer };

async function receiver(status: () => number, body = 'ok') {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.statusCode = status();
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

async function backendsGone(database: string): Promise<void> {
  if (!('url' in pg)) return;
  const admin = new PgClient(pg.url);
  await admin.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const r = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [database]);
      if (r.rows[0].n === 0) return;
      await new Promise((res) => setTimeout(res, 20));
    }
  } finally {
    await admin.end();
  }
}

const countBy = (hits: Hit[]) => {
  const m = new Map<string, number>();
  for (const h of hits) {
    const id = String(h.headers['x-service-event-id']);
    m.set(id, (m.get(id) ?? 0) + 1);
  }
  return m;
};

describe('webhook dispatcher (PostgreSQL)', { skip: 'skip' in pg ? pg.skip : false }, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgres>>;
  let db2: Db;
  let agent: Agent;

  before(async () => {
    if (!('url' in pg)) return;
    fresh = await freshPostgres(pg.url);
    db2 = await openDb(fresh.url, { migrate: false });
    agent = new Agent({ connections: 64 });
  });
  after(async () => {
    await agent?.close();
    await db2?.close();
    if (!fresh) return;
    await fresh.db.close();
    // pg's pool.end() resolves before its backends have exited; DROP ... WITH (FORCE) would then kill them
    // mid-goodbye and surface an uncaught "terminating connection" error. Wait until they are gone.
    await backendsGone(new URL(fresh.url).pathname.slice(1));
    await fresh.drop();
  });

  test('two workers on one database send every due delivery exactly once per attempt', async () => {
    let answer = 500;
    const rx = await receiver(() => answer);
    try {
      const clock = new ManualClock();
      const s = await seed(fresh.db, clock, rx.url, 200);
      // Small batches so both workers interleave claims on the same due rows.
      const a = createDispatcher({
        db: fresh.db,
        clock,
        workerId: 'worker-a',
        agent,
        allowPrivateNetwork: true,
        batchSize: 15,
        concurrency: 8,
        ...neverSlow,
      });
      const b = createDispatcher({
        db: db2,
        clock,
        workerId: 'worker-b',
        agent,
        allowPrivateNetwork: true,
        batchSize: 15,
        concurrency: 8,
        ...neverSlow,
      });

      let sent = 0;
      for (let round = 0; round < 3; round++)
        sent += (await Promise.all([a.runOnce(), b.runOnce()])).reduce((x, y) => x + y, 0);
      assert.equal(sent, 200);
      assert.equal(rx.hits.length, 200);
      let counts = countBy(rx.hits);
      assert.equal(counts.size, 200);
      assert.ok(
        [...counts.values()].every((n) => n === 1),
        'first attempt received exactly once',
      );

      answer = 200;
      clock.advance(MIN);
      sent = 0;
      for (let round = 0; round < 3; round++)
        sent += (await Promise.all([a.runOnce(), b.runOnce()])).reduce((x, y) => x + y, 0);
      assert.equal(sent, 200);
      counts = countBy(rx.hits);
      assert.deepEqual(new Set(counts.keys()), new Set(s.eventIds));
      assert.ok(
        [...counts.values()].every((n) => n === 2),
        'second attempt received exactly once',
      );

      const rows = await fresh.db.kysely
        .selectFrom('deliveries')
        .select(['status', 'attempts'])
        .where('hook_id', '=', s.hookId)
        .execute();
      assert.ok(
        rows.every((r) => r.status === 'succeeded' && r.attempts === 2),
        "rows.every((r) => r.status === 'succeeded' && r.attempts === 2)",
      );
      const atts = await fresh.db.kysely
        .selectFrom('delivery_attempts as a')
        .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
        .select(['a.delivery_id', 'a.attempt', 'a.worker'])
        .where('d.hook_id', '=', s.hookId)
        .execute();
      assert.equal(atts.length, 400);
      assert.equal(new Set(atts.map((x) => `${x.delivery_id}#${x.attempt}`)).size, 400, 'no duplicate attempt rows');
      const workers = new Set(atts.map((x) => x.worker));
      assert.ok(workers.has('worker-a') && workers.has('worker-b'), 'both workers took part');
      await a.stop();
      await b.stop();
    } finally {
      await rx.close();
    }
  });

  test('a lost claim records nothing: the worker that re-claimed after the lease owns the outcome', async () => {
    const rx = await receiver(() => 200);
    try {
      const clock = new ManualClock();
      const s = await seed(fresh.db, clock, rx.url, 1);
      const [mine] = await claimDue(fresh.db, { now: clock.now(), workerId: 'slow', leaseMs: 60_000, limit: 10 });
      assert.ok(mine, 'mine');
      assert.equal(
        (await claimDue(db2, { now: clock.now() + 59_999, workerId: 'other', leaseMs: 60_000, limit: 10 })).length,
        0,
      );
      clock.advance(60_000);
      const [theirs] = await claimDue(db2, { now: clock.now(), workerId: 'other', leaseMs: 60_000, limit: 10 });
      assert.equal(theirs?.id, mine.id);

      const outcome = (worker: string) => ({
        kind: 'attempt' as const,
        deliveryId: mine.id,
        attemptsAtClaim: 0,
        ok: worker === 'other',
        startedAt: clock.now(),
        durationMs: 3,
        statusCode: worker === 'other' ? 200 : 500,
        responseBody: worker,
        error: null,
        nextAttemptAt: worker === 'other' ? null : clock.now() + MIN,
        recordedAt: clock.now(),
      });
      assert.equal(await recordOutcomes(db2, 'other', [outcome('other')]), 1);
      assert.equal(await recordOutcomes(fresh.db, 'slow', [outcome('slow')]), 0, 'the lost claim changes nothing');
      const view = await getDelivery(fresh.db, mine.id);
      assert.equal(view?.status, 'succeeded');
      assert.equal(view?.attempts_log.length, 1);
      assert.equal(view?.attempts_log[0]?.response_body, 'other');
      assert.equal(s.eventIds[0], view?.event_id);
    } finally {
      await rx.close();
    }
  });

  test('records, lists and replays on PostgreSQL; NUL bytes in a response do not break the record', async () => {
    let answer = 500;
    const rx = await receiver(() => answer, 'bad\u0000byte');
    try {
      const clock = new ManualClock();
      const s = await seed(fresh.db, clock, rx.url, 1);
      const d = createDispatcher({ db: fresh.db, clock, workerId: 'pg-one', agent, allowPrivateNetwork: true });
      let row = (await listDeliveries(fresh.db, { hookId: s.hookId }))[0]!;
      assert.equal(row.status, 'pending');
      while (row.status === 'pending' || row.status === 'retrying') {
        clock.set(Date.parse(row.next_attempt_at!));
        assert.equal(await d.runOnce(), 1);
        row = (await getDelivery(fresh.db, row.id))!;
        if (row.attempts < 7) assert.equal(row.status, 'retrying', `after failed attempt ${row.attempts}`);
      }
      assert.equal(row.status, 'giving_up');
      assert.equal(row.attempts_log.length, 7);
      assert.equal(row.attempts_log[0]?.response_body, 'badbyte');

      answer = 200;
      const replayed = await replayDelivery({ db: fresh.db, clock, wakeDeliveries: () => undefined }, row.id, {
        workspaceId: s.workspaceId,
        hookId: s.hookId,
      });
      assert.equal(replayed?.event_id, s.eventIds[0]);
      const replay = { id: replayed!.delivery_id };
      assert.equal(await d.runOnce(), 1);
      const last = rx.hits.at(-1)!;
      assert.equal(last.headers['x-service-event-id'], s.eventIds[0]);
      new Stripe('sk_test_x').webhooks.constructEvent(
        last.raw,
        String(last.headers['x-service-signature']),
        s.secret,
        300,
        undefined,
        clock.now(),
      );
      assert.equal((await getDelivery(fresh.db, replay!.id))?.status, 'succeeded');
      const listed = await listDeliveries(fresh.db, { workspaceId: s.workspaceId });
      assert.deepEqual(
        listed.map((v) => v.id),
        [replay!.id, row.id],
      );
      await d.stop();
    } finally {
      await rx.close();
    }
  });
});
