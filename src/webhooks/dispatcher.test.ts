// The webhook dispatcher on SQLite, one delivery at a time: what is sent and signed, the retry schedule, failures.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { ManualClock } from '../lib/clock.js';
import { WEBHOOK_TIMEOUT_MS } from '../limits.js';
import { getDelivery } from './hooks.service.js';
import { createDispatcher } from './dispatcher.js';
import { newWebhookSecret } from './signature.js';
import {
  attemptsOf,
  db,
  deliveryOf,
  dispatcher,
  HOUR,
  MIN,
  receiver,
  seed,
  stripe,
  tOf,
  useDispatcherDb,
} from './testing/dispatcher.js';

describe('webhook dispatcher (SQLite)', () => {
  useDispatcherDb();

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
});
