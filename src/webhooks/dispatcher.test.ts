import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import { Agent } from 'undici';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { getDelivery, listDeliveries, replayDelivery } from './hooks.service.js';
import { createDispatcher, type DispatcherOptions } from './dispatcher.js';
import { createEmitter } from './outbox.repo.js';
import type { DeliveryStatus } from './deliveries.repo.js';
import { WEBHOOK_TIMEOUT_MS } from '../limits.js';
import { newWebhookSecret } from './signature.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const stripe = new Stripe('sk_test_x');

type Hit = { headers: http.IncomingHttpHeaders; raw: Buffer; at: number };
type Reply = (req: http.IncomingMessage, res: http.ServerResponse, hit: Hit) => void;

/** A real HTTP receiver on 127.0.0.1 recording every request; `reply` decides the answer (200 "ok" by default). */
async function receiver(reply: Reply = (_q, res) => res.end('ok')) {
  const hits: Hit[] = [];
  let onHit: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { headers: req.headers, raw: Buffer.concat(chunks), at: Date.now() };
      hits.push(hit);
      onHit?.();
      reply(req, res, hit);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits,
    /** Resolves once `n` requests have arrived. */
    waitFor(n: number): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (hits.length >= n) {
            onHit = undefined;
            resolve();
          }
        };
        onHit = check;
        check();
      });
    },
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

type Seeded = { workspaceId: string; hookId: string; secret: string; eventIds: string[] };

/** A workspace, one hook (all events) and `n` events emitted through the real outbox in one transaction. */
async function seed(db: Db, clock: ManualClock, targetUrl: string, n = 1): Promise<Seeded> {
  const now = clock.now();
  const workspaceId = newId('ws');
  await db.kysely
    .insertInto('workspaces')
    .values({ id: workspaceId, name: 'Acme', slug: workspaceId, tier: 'business', reply_to: null, created_at: now })
    .execute();
  const secret = newWebhookSecret();
  const hookId = newId('hook');
  await db.kysely
    .insertInto('hooks')
    .values({
      id: hookId,
      workspace_id: workspaceId,
      target_url: targetUrl,
      events: '[]',
      secret,
      document_id: null,
      source: 'dashboard',
      created_at: now,
      deleted_at: null,
    })
    .execute();
  const emit = createEmitter(clock);
  const eventIds = await db.kysely.transaction().execute(async (trx) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await emit(trx, 'signing_request.signed', workspaceId, {
        signing_request_id: `sr_${i}`,
        document_id: `doc_${i}`,
        // Non-ASCII on purpose: the body must arrive byte for byte.
        signer: { email: 'zoe@example.com', name: 'Zoë Ångström — 署名 ✍️' },
        sha256: 'a'.repeat(64),
      });
      ids.push(r.eventId);
    }
    return ids;
  });
  return { workspaceId, hookId, secret, eventIds };
}

const deliveryOf = async (db: Db, eventId: string) =>
  db.kysely.selectFrom('deliveries').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();

const attemptsOf = (db: Db, deliveryId: string) =>
  db.kysely
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();

const tOf = (h: Hit): number => Number(/^t=(\d+),/.exec(String(h.headers['x-service-signature']))![1]);

describe('webhook dispatcher (SQLite)', () => {
  let db: Db;
  let agent: Agent;
  const made: Array<{ stop(): Promise<void> }> = [];

  // A fresh database per test: a moved clock must not make another test's leftovers due.
  before(() => {
    agent = new Agent();
  });
  beforeEach(async () => {
    db = await openDb('sqlite::memory:');
  });
  afterEach(async () => {
    for (const d of made.splice(0)) await d.stop();
    await db.close();
  });
  after(async () => {
    await agent.close();
  });

  const dispatcher = (clock: ManualClock, extra: Partial<DispatcherOptions> = {}) => {
    const d = createDispatcher({
      db,
      clock,
      workerId: `test:${process.pid}:${newId('att')}`,
      agent,
      allowPrivateNetwork: true,
      ...extra,
    });
    made.push(d);
    return d;
  };

  test('delivers to a real receiver with exact headers, the exact body and a signature Stripe verifies', async () => {
    const rx = await receiver();
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      const d = dispatcher(clock);
      assert.equal(await d.runOnce(), 1);
      assert.equal(rx.hits.length, 1);
      const hit = rx.hits[0]!;
      const event = await db.kysely
        .selectFrom('events')
        .selectAll()
        .where('id', '=', s.eventIds[0]!)
        .executeTakeFirstOrThrow();

      assert.ok(hit.raw.equals(Buffer.from(event.body, 'utf8')), 'body byte-identical to the stored event body');
      const h = hit.headers;
      assert.equal(h['content-type'], 'application/json');
      assert.equal(h['user-agent'], 'service-webhooks/1.0');
      assert.equal(h['x-service-event-id'], s.eventIds[0]);
      assert.equal(h['x-service-event'], 'signing_request.signed');
      assert.match(String(h['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.equal(h['x-legacy-signature'], h['x-service-signature']);
      assert.equal(h['x-legacy-event-id'], h['x-service-event-id']);
      assert.equal(h['x-legacy-event'], h['x-service-event']);
      assert.equal(tOf(hit), Math.floor(clock.now() / 1000));

      // Independent verifier: Stripe's scheme is ours (t.body, HMAC-SHA256 with the whole whsec_ string).
      const verified = stripe.webhooks.constructEvent(
        hit.raw,
        String(h['x-service-signature']),
        s.secret,
        300,
        undefined,
        clock.now(),
      );
      assert.equal((verified as unknown as { event_id: string }).event_id, s.eventIds[0]);
      assert.throws(() =>
        stripe.webhooks.constructEvent(
          hit.raw,
          String(h['x-service-signature']),
          newWebhookSecret(),
          300,
          undefined,
          clock.now(),
        ),
      );

      const row = await deliveryOf(db, s.eventIds[0]!);
      assert.equal(row.status, 'succeeded');
      assert.equal(row.attempts, 1);
      assert.equal(row.next_attempt_at, null);
      assert.equal(row.claimed_by, null);
      assert.equal(row.last_status_code, 200);
      const atts = await attemptsOf(db, row.id);
      assert.equal(atts.length, 1);
      assert.equal(atts[0]!.status_code, 200);
      assert.equal(atts[0]!.response_body, 'ok');
      assert.equal(atts[0]!.error, null);
      assert.equal(atts[0]!.started_at, clock.now());
      assert.match(atts[0]!.worker, /^test:/);

      const view = await getDelivery(db, row.id);
      assert.equal(view?.event_id, s.eventIds[0]);
      assert.equal(view?.event, 'signing_request.signed');
      assert.equal(view?.created_at, new Date(clock.now()).toISOString());
      assert.equal(view?.attempts_log[0]?.started_at, new Date(clock.now()).toISOString());

      assert.equal(await d.runOnce(), 0, 'a succeeded delivery is never sent again');
      clock.advance(48 * HOUR);
      assert.equal(await d.runOnce(), 0);
      assert.equal(rx.hits.length, 1);
    } finally {
      await rx.close();
    }
  });

  test('a receiver answering 500 gets exactly 7 attempts on the spec schedule, each freshly signed, then giving_up', async () => {
    const rx = await receiver((_q, res) => {
      res.statusCode = 500;
      res.end('boom');
    });
    try {
      const start = Date.UTC(2026, 2, 1, 9, 0, 0, 250);
      const clock = new ManualClock(start);
      const s = await seed(db, clock, rx.url);
      const eventId = s.eventIds[0]!;
      const d = dispatcher(clock);
      const fresh = await deliveryOf(db, eventId);
      assert.deepEqual([fresh.status, fresh.attempts], ['pending', 0], 'pending: not attempted yet');
      const delays = [0, 1 * MIN, 5 * MIN, 30 * MIN, 2 * HOUR, 6 * HOUR, 24 * HOUR];
      const expectedTimes: number[] = [];
      let at = start;
      for (const [i, delay] of delays.entries()) {
        at += delay;
        expectedTimes.push(at);
        if (delay > 0) {
          clock.set(at - 1);
          assert.equal(await d.runOnce(), 0, `attempt ${i + 1} is not sent 1 ms early`);
          assert.equal(rx.hits.length, i);
        }
        clock.set(at);
        assert.equal(await d.runOnce(), 1, `attempt ${i + 1} is sent when due`);
        assert.equal(rx.hits.length, i + 1);
        const hit = rx.hits[i]!;
        assert.equal(tOf(hit), Math.floor(at / 1000), 'signed with t at send time');
        stripe.webhooks.constructEvent(
          hit.raw,
          String(hit.headers['x-service-signature']),
          s.secret,
          300,
          undefined,
          at,
        );
        assert.equal(hit.headers['x-service-event-id'], eventId, 'event id stable across retries');

        const row = await deliveryOf(db, eventId);
        assert.equal(row.attempts, i + 1);
        assert.equal(row.last_status_code, 500);
        if (i < 6) {
          assert.equal(row.status, 'retrying');
          assert.equal(row.next_attempt_at, at + delays[i + 1]!);
        }
      }
      assert.equal(new Set(rx.hits.map(tOf)).size, 7, 'a fresh t on every attempt');

      const row = await deliveryOf(db, eventId);
      assert.equal(row.status, 'giving_up');
      assert.equal(row.next_attempt_at, null);
      for (const days of [1, 3, 30]) {
        clock.advance(days * 24 * HOUR);
        assert.equal(await d.runOnce(), 0);
      }
      assert.equal(rx.hits.length, 7);

      const atts = await attemptsOf(db, row.id);
      assert.deepEqual(
        atts.map((a) => a.attempt),
        [1, 2, 3, 4, 5, 6, 7],
      );
      assert.deepEqual(
        atts.map((a) => a.started_at),
        expectedTimes,
      );
      assert.ok(
        atts.every((a) => a.status_code === 500 && a.response_body === 'boom' && a.error !== null),
        "atts.every((a) => a.status_code === 500 && a.response_body === 'boom' && a.error !== null)",
      );
      assert.ok(
        atts.every((a) => !a.error!.includes(s.secret)),
        'atts.every((a) => !a.error!.includes(s.secret))',
      );
      const view = await getDelivery(db, row.id);
      assert.equal(view?.status, 'giving_up');
      assert.equal(view?.attempts, 7);
      assert.equal(view?.next_attempt_at, null);
      assert.equal(view?.attempts_log.length, 7);
      assert.equal(view?.attempts_log[6]?.started_at, new Date(expectedTimes[6]!).toISOString());
    } finally {
      await rx.close();
    }
  });

  test('a 302 is a failure and the redirect target gets nothing', async () => {
    const healthy = await receiver();
    const redirector = await receiver((_q, res) => {
      res.writeHead(302, { location: healthy.url });
      res.end();
    });
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, redirector.url);
      assert.equal(await dispatcher(clock).runOnce(), 1);
      assert.equal(redirector.hits.length, 1);
      assert.equal(healthy.hits.length, 0);
      const row = await deliveryOf(db, s.eventIds[0]!);
      assert.equal(row.status, 'retrying');
      assert.equal(row.attempts, 1);
      assert.equal(row.last_status_code, 302);
      assert.equal(row.next_attempt_at, clock.now() + MIN);
      const [att] = await attemptsOf(db, row.id);
      assert.equal(att?.status_code, 302);
      assert.match(att?.error ?? '', /redirect/);
    } finally {
      await healthy.close();
      await redirector.close();
    }
  });

  test('only the first 2048 characters of a large response are kept', async () => {
    const rx = await receiver((_q, res) => {
      res.statusCode = 503;
      res.end('x'.repeat(1_000_000));
    });
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      assert.equal(await dispatcher(clock).runOnce(), 1);
      const row = await deliveryOf(db, s.eventIds[0]!);
      const [att] = await attemptsOf(db, row.id);
      assert.equal(att?.status_code, 503);
      assert.equal(att?.response_body, 'x'.repeat(2048));
    } finally {
      await rx.close();
    }
  });

  test('a receiver that never answers fails at the timeout', async () => {
    const held: http.ServerResponse[] = [];
    const rx = await receiver((_q, res) => void held.push(res));
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      const started = performance.now();
      assert.equal(await dispatcher(clock, { timeoutMs: 300 }).runOnce(), 1);
      const elapsed = performance.now() - started;
      assert.ok(elapsed >= 290 && elapsed < 5_000, `failed after ${elapsed} ms`);
      const row = await deliveryOf(db, s.eventIds[0]!);
      assert.equal(row.status, 'retrying');
      assert.equal(row.next_attempt_at, clock.now() + MIN);
      const [att] = await attemptsOf(db, row.id);
      assert.equal(att?.status_code, null);
      assert.match(att?.error ?? '', /timeout/);
      assert.ok(att!.duration_ms >= 290, `duration_ms ${att!.duration_ms}`);
    } finally {
      await rx.close();
    }
  });

  test('the default timeout is the spec 15 seconds', async (t) => {
    assert.equal(WEBHOOK_TIMEOUT_MS, 15_000);
    const held: http.ServerResponse[] = [];
    const rx = await receiver((_q, res) => void held.push(res));
    // Fake timers drive the dispatcher's deadline; the request itself still goes over a real socket.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      const run = dispatcher(clock).runOnce();
      await rx.waitFor(1);
      await new Promise((r) => setImmediate(r));
      t.mock.timers.tick(14_999);
      const row = await deliveryOf(db, s.eventIds[0]!);
      assert.equal(row.attempts, 0, 'still waiting 1 ms before the deadline');
      t.mock.timers.tick(1);
      assert.equal(await run, 1);
      const [att] = await attemptsOf(db, row.id);
      assert.match(att?.error ?? '', /within 15000 ms/);
    } finally {
      t.mock.timers.reset();
      await rx.close();
    }
  });

  test('with private networks refused, a hook on 127.0.0.1 fails with a recorded error and receives nothing', async () => {
    const rx = await receiver();
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      // No agent passed: the dispatcher builds the guarded one.
      const d = createDispatcher({ db, clock, workerId: 'guarded', allowPrivateNetwork: false });
      try {
        assert.equal(await d.runOnce(), 1);
      } finally {
        await d.stop();
      }
      assert.equal(rx.hits.length, 0);
      const row = await deliveryOf(db, s.eventIds[0]!);
      assert.equal(row.status, 'retrying');
      assert.equal(row.attempts, 1);
      const [att] = await attemptsOf(db, row.id);
      assert.equal(att?.status_code, null);
      assert.match(att?.error ?? '', /refused address 127\.0\.0\.1/);
    } finally {
      await rx.close();
    }
  });

  test('replaying a giving_up delivery sends the same event again as a new delivery', async () => {
    let fail = true;
    const rx = await receiver((_q, res) => {
      res.statusCode = fail ? 500 : 204;
      res.end();
    });
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      const d = dispatcher(clock);
      let first = await deliveryOf(db, s.eventIds[0]!);
      while (first.status === 'pending' || first.status === 'retrying') {
        clock.set(first.next_attempt_at!);
        assert.equal(await d.runOnce(), 1);
        first = await deliveryOf(db, s.eventIds[0]!);
      }
      assert.equal(first.status, 'giving_up');
      assert.equal(rx.hits.length, 7);

      fail = false;
      clock.advance(3 * 24 * HOUR);
      let woken = 0;
      const deps = { db, clock, wakeDeliveries: () => void woken++ };
      const replayed = await replayDelivery(deps, first.id);
      assert.ok(replayed, 'replayed');
      assert.equal(woken, 1, 'the worker is woken');
      assert.notEqual(replayed.delivery_id, first.id);
      assert.equal(replayed.event_id, s.eventIds[0]);
      assert.equal(replayed.hook_id, s.hookId);
      const replay = (await getDelivery(db, replayed.delivery_id))!;
      assert.equal(replay.event_id, s.eventIds[0]);
      assert.equal(replay.hook_id, s.hookId);
      assert.equal(replay.status, 'pending');
      assert.equal(replay.attempts, 0);
      assert.equal(replay.next_attempt_at, new Date(clock.now()).toISOString());
      assert.equal(await replayDelivery(deps, 'del_missing'), undefined);
      for (const scope of [
        { workspaceId: 'ws_other', hookId: s.hookId },
        { workspaceId: s.workspaceId, hookId: 'hook_other' },
      ])
        assert.equal(await replayDelivery(deps, first.id, scope), undefined, 'out of scope: nothing written');
      assert.equal(woken, 1);

      assert.equal(await d.runOnce(), 1);
      assert.equal(rx.hits.length, 8);
      assert.equal(rx.hits[7]!.headers['x-service-event-id'], s.eventIds[0]);
      stripe.webhooks.constructEvent(
        rx.hits[7]!.raw,
        String(rx.hits[7]!.headers['x-service-signature']),
        s.secret,
        300,
        undefined,
        clock.now(),
      );
      const after = await getDelivery(db, replay.id);
      assert.equal(after?.status, 'succeeded');
      assert.equal(after?.last_status_code, 204);
      assert.equal((await getDelivery(db, first.id))?.status, 'giving_up');

      const listed = await listDeliveries(db, { hookId: s.hookId });
      assert.deepEqual(
        listed.map((v) => v.id),
        [replay.id, first.id],
        'newest first',
      );
      assert.equal(listed[1]!.attempts_log.length, 7);
      assert.equal((await listDeliveries(db, { workspaceId: s.workspaceId, limit: 1 })).length, 1);
      assert.equal((await listDeliveries(db, { workspaceId: 'ws_other' })).length, 0);
      const ids = async (statuses: DeliveryStatus[]) =>
        (await listDeliveries(db, { hookId: s.hookId, statuses })).map((v) => v.id);
      assert.deepEqual(await ids(['giving_up']), [first.id]);
      assert.deepEqual(await ids(['succeeded']), [replay.id]);
      assert.deepEqual(await ids(['pending', 'retrying']), []);
    } finally {
      await rx.close();
    }
  });

  test('a delivery to a deleted hook gives up without a request', async () => {
    const rx = await receiver();
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      await db.kysely.updateTable('hooks').set({ deleted_at: clock.now() }).where('id', '=', s.hookId).execute();
      assert.equal(await dispatcher(clock).runOnce(), 0);
      assert.equal(rx.hits.length, 0);
      const row = await deliveryOf(db, s.eventIds[0]!);
      assert.equal(row.status, 'giving_up');
      assert.equal(row.last_error, 'hook deleted');
      assert.equal(row.attempts, 0);
      const deps = { db, clock, wakeDeliveries: () => assert.fail('nothing to wake') };
      assert.equal(await replayDelivery(deps, row.id), undefined, "a deleted hook's delivery is not replayed");
      const rows = await db.kysely.selectFrom('deliveries').select('id').where('hook_id', '=', s.hookId).execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [row.id],
      );
    } finally {
      await rx.close();
    }
  });

  test('a hook deleted while its batch is being sent stops the rest of the batch', async () => {
    const clock = new ManualClock();
    let s: Seeded | undefined;
    // The receiver deletes the hook (as another process would, committed) while answering the 3rd delivery.
    const rx = await receiver((_q, res, _hit) => {
      if (rx.hits.length === 3) {
        void db.kysely
          .updateTable('hooks')
          .set({ deleted_at: clock.now() })
          .where('id', '=', s!.hookId)
          .execute()
          .then(() => res.end('ok'));
      } else res.end('ok');
    });
    try {
      s = await seed(db, clock, rx.url, 20);
      await dispatcher(clock, { concurrency: 1 }).runOnce();
      assert.equal(rx.hits.length, 3, 'nothing is sent once the deletion is committed');
      const rows = await db.kysely.selectFrom('deliveries').selectAll().where('hook_id', '=', s.hookId).execute();
      assert.equal(rows.filter((r) => r.status === 'succeeded').length, 3);
      const dropped = rows.filter((r) => r.status === 'giving_up');
      assert.equal(dropped.length, 17);
      assert.ok(
        dropped.every((r) => r.last_error === 'hook deleted' && r.attempts === 0),
        'the rest end as hook deleted, unattempted',
      );
    } finally {
      await rx.close();
    }
  });

  test('start() delivers in the background and stop() waits for the in-flight delivery', async () => {
    const held: http.ServerResponse[] = [];
    const rx = await receiver((_q, res) => void held.push(res));
    try {
      const clock = new ManualClock();
      const s = await seed(db, clock, rx.url);
      const d = createDispatcher({ db, clock, workerId: 'bg', agent, allowPrivateNetwork: true, pollIntervalMs: 20 });
      d.start();
      d.wake();
      await rx.waitFor(1);
      let stopped = false;
      const stopping = d.stop().then(() => (stopped = true));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(stopped, false, 'stop waits for the request on the wire');
      held[0]!.end('late but fine');
      await stopping;
      const row = await deliveryOf(db, s.eventIds[0]!);
      assert.equal(row.status, 'succeeded');
      assert.equal(await d.runOnce(), 0, 'stopped for good');
    } finally {
      await rx.close();
    }
  });

  test('a worker killed mid-delivery loses nothing: its claim expires and another worker delivers once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-dispatch-'));
    const file = path.join(dir, 'db.sqlite');
    const fileDb = await openDb(`sqlite:${file}`);
    let holdFirst = true;
    const rx = await receiver((_q, res) => {
      if (holdFirst) {
        holdFirst = false;
        return; // accept, read the request, never answer
      }
      res.end('ok');
    });
    try {
      const clock = new ManualClock();
      const s = await seed(fileDb, clock, rx.url);
      const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testing', 'worker-child.ts');
      const child = spawn(process.execPath, ['--import', 'tsx', script, file, String(clock.now()), 'child-worker'], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, sig) => r(sig)));
      await rx.waitFor(1);
      const claimed = await deliveryOf(fileDb, s.eventIds[0]!);
      assert.equal(claimed.claimed_by, 'child-worker');
      assert.equal(claimed.claim_expires_at, clock.now() + 60_000);
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');

      const d = createDispatcher({ db: fileDb, clock, workerId: 'survivor', agent, allowPrivateNetwork: true });
      clock.advance(59_999);
      assert.equal(await d.runOnce(), 0, 'the dead worker still holds an unexpired claim');
      clock.advance(1);
      assert.equal(await d.runOnce(), 1);
      await d.stop();

      assert.equal(rx.hits.length, 2);
      assert.equal(rx.hits[1]!.headers['x-service-event-id'], s.eventIds[0]);
      const row = await deliveryOf(fileDb, s.eventIds[0]!);
      assert.equal(row.status, 'succeeded');
      assert.equal(row.attempts, 1);
      const atts = await attemptsOf(fileDb, row.id);
      assert.equal(atts.length, 1);
      assert.equal(atts[0]!.worker, 'survivor');
      assert.equal(atts[0]!.status_code, 200);
    } finally {
      await rx.close();
      await fileDb.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('throughput: 2000 deliveries to a local receiver', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-dispatch-'));
    const fileDb = await openDb(`sqlite:${path.join(dir, 'db.sqlite')}`);
    const rx = await receiver();
    try {
      const clock = new ManualClock();
      await seed(fileDb, clock, rx.url, 2000);
      const d = createDispatcher({ db: fileDb, clock, workerId: 'bench', agent, allowPrivateNetwork: true });
      const t0 = performance.now();
      assert.equal(await d.runOnce(), 2000);
      const secs = (performance.now() - t0) / 1000;
      await d.stop();
      console.log(
        `webhook dispatcher throughput (SQLite file, local receiver): ${Math.round(2000 / secs)} deliveries/s`,
      );
      assert.equal(rx.hits.length, 2000);
      const left = await fileDb.kysely
        .selectFrom('deliveries')
        .select('id')
        .where('status', '!=', 'succeeded')
        .execute();
      assert.equal(left.length, 0);
      const atts = await fileDb.kysely
        .selectFrom('delivery_attempts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(atts.n), 2000);
    } finally {
      await rx.close();
      await fileDb.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
