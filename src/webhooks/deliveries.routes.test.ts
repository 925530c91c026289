// Delivery history and replay through the API, on both databases: the real app on a real port, a real receiver that
// verifies every signature with Stripe's verifier (testing/e2e.ts), and the manual clock moved past each schedule
// step instead of waiting for it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startHarness, type Harness } from '../testing/harness.js';
import { startReceiver, type Receiver } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';

const MIN = 60_000;
const databases = await bothDatabases();

for (const d of databases) {
  describe(`webhook delivery history and replay (${d.name})`, { skip: d.skip }, () => {
    let h: Harness;
    let rx: Receiver;
    before(async () => {
      h = await startHarness({ database: d.database });
      rx = await startReceiver();
    });
    after(async () => {
      await rx?.close();
      await h?.close();
    });

    /**
     * A tenant with one hook on its own receiver path whose secret is NOT registered yet: until `accept()`, the
     * receiver answers 400 to every delivery (a failure) and records nothing; after it, it verifies and records.
     */
    async function hookOnReceiver() {
      const t = await h.tenant();
      const path = `/r/${randomBytes(6).toString('hex')}`;
      const created = await h.request('POST', '/v1/hooks', { token: t.token, body: { target_url: rx.url(path) } });
      assert.equal(created.status, 201, created.text);
      const hook = created.json as { id: string; secret: string };
      const api = (method: string, p: string) => h.request(method, p, { token: t.token });
      return {
        t,
        hook,
        api,
        accept: () => void rx.secrets.set(path, hook.secret),
        received: () => rx.events.filter((e) => e.path === path),
        history: (query = '') => api('GET', `/v1/hooks/${hook.id}/deliveries${query}`),
        replay: (deliveryId: string, hookId = hook.id) =>
          api('POST', `/v1/hooks/${hookId}/deliveries/${deliveryId}/replay`),
        async sendTest(): Promise<string> {
          const r = await api('POST', `/v1/hooks/${hook.id}/test`);
          assert.equal(r.status, 202, r.text);
          return r.json.event_id;
        },
      };
    }

    const row = (id: string) =>
      h.db.kysely.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const deliveryCount = async () =>
      Number(
        (
          await h.db.kysely
            .selectFrom('deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('a failure leaves the delivery retrying with its next attempt; the moved clock retries it; replay of a succeeded delivery re-sends the same event', async () => {
      const x = await hookOnReceiver();
      const eventId = await x.sendTest();
      const fresh = await x.history();
      assert.equal(fresh.json[0].status, 'pending', 'not attempted yet');
      assert.equal(fresh.json[0].attempts, 0);

      const failedAt = h.clock.now();
      await h.work();
      const hist = await x.history();
      assert.equal(hist.status, 200);
      assert.equal(hist.json.length, 1);
      const dv = hist.json[0];
      assert.equal(dv.event_id, eventId);
      assert.equal(dv.hook_id, x.hook.id);
      assert.equal(dv.status, 'retrying');
      assert.equal(dv.attempts, 1);
      assert.equal(dv.last_status_code, 400);
      assert.equal(dv.last_error, 'non-2xx response: 400');
      assert.equal(dv.next_attempt_at, new Date(failedAt + MIN).toISOString(), 'attempt 2 is due one minute later');
      assert.equal(dv.attempts_log.length, 1);
      const a1 = dv.attempts_log[0];
      assert.deepEqual(Object.keys(a1).sort(), [
        'attempt',
        'duration_ms',
        'error',
        'response_body',
        'started_at',
        'status_code',
      ]);
      assert.equal(a1.attempt, 1);
      assert.equal(a1.started_at, new Date(failedAt).toISOString());
      assert.equal(a1.status_code, 400);
      assert.equal(a1.error, 'non-2xx response: 400');
      assert.ok(Number.isInteger(a1.duration_ms) && a1.duration_ms >= 0, `latency ${a1.duration_ms}`);
      assert.match(a1.response_body, /no secret/);
      assert.equal((await row(dv.id)).status, 'retrying', 'the row itself carries the spec name');

      // Filters: failed = retrying + giving_up; every state by name; anything else is 400 naming the field.
      for (const [status, n] of [
        ['retrying', 1],
        ['failed', 1],
        ['pending', 0],
        ['succeeded', 0],
        ['giving_up', 0],
      ] as const) {
        const r = await x.history(`?status=${status}`);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.length, n, `?status=${status}`);
      }
      for (const bad of ['bogus', 'RETRYING', 'failed,succeeded', '']) {
        const r = await x.history(`?status=${encodeURIComponent(bad)}`);
        assert.equal(r.status, 400, `?status=${bad}: ${r.text}`);
        assert.equal(r.json.code, 'invalid_request');
        assert.equal(r.json.meta.field, 'status');
      }

      // Not due yet: nothing is sent, even with the receiver now accepting.
      x.accept();
      h.clock.advance(MIN - 1);
      await h.work();
      assert.equal(x.received().length, 0);
      assert.equal((await row(dv.id)).attempts, 1);

      h.clock.advance(1);
      await h.work();
      assert.equal(x.received().length, 1, 'retried once it came due');
      assert.equal(x.received()[0]!.event.event_id, eventId);
      const done = (await x.history()).json[0];
      assert.equal(done.status, 'succeeded');
      assert.equal(done.attempts, 2);
      assert.equal(done.next_attempt_at, null);
      assert.deepEqual(
        done.attempts_log.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code]),
        [
          [1, 400],
          [2, 200],
        ],
      );

      // Replay of the succeeded delivery: 202 with the new delivery, the worker woken, the same event sent again.
      let woken = 0;
      const dispatcher = h.runtime.dispatcher!;
      const wake = dispatcher.wake;
      dispatcher.wake = () => {
        woken++;
        wake();
      };
      let r;
      try {
        r = await x.replay(done.id);
      } finally {
        dispatcher.wake = wake;
      }
      assert.equal(r.status, 202, r.text);
      assert.deepEqual(Object.keys(r.json).sort(), ['delivery_id', 'event_id', 'hook_id']);
      assert.match(r.json.delivery_id, /^del_[0-9a-f]{24}$/);
      assert.notEqual(r.json.delivery_id, done.id);
      assert.equal(r.json.event_id, eventId);
      assert.equal(r.json.hook_id, x.hook.id);
      assert.equal(woken, 1, 'the delivery worker is woken after the commit');
      const queued = (await x.history()).json;
      assert.deepEqual(
        queued.map((v: { id: string; status: string; attempts: number }) => [v.id, v.status, v.attempts]),
        [
          [r.json.delivery_id, 'pending', 0],
          [done.id, 'succeeded', 2],
        ],
        'newest first: the replay is its own delivery; the source is untouched',
      );
      assert.equal(queued[0].next_attempt_at, new Date(h.clock.now()).toISOString(), 'due now');

      await h.work();
      const got = x.received();
      assert.equal(got.length, 2);
      assert.equal(got[1]!.event.event_id, eventId, 'the same event id, so the receiver deduplicates');
      assert.equal(got[1]!.headers['x-service-event-id'], eventId);
      assert.equal(got[1]!.body, got[0]!.body, 'the same body byte for byte');
      // startReceiver verified the signature (Stripe's verifier, the hook's secret) before recording it.
      const after = (await x.history()).json;
      assert.equal(after[0].status, 'succeeded');
      assert.equal(after[0].attempts_log.length, 1);
      assert.equal(after[1].attempts_log.length, 2);
    });

    test('a giving_up delivery is replayed as a new delivery of the same event; history pages with before and limit', async () => {
      const x = await hookOnReceiver();
      const eventId = await x.sendTest();
      const [{ id }] = (await x.history()).json;
      for (let attempt = 1; attempt <= 7; attempt++) {
        const cur = await row(id);
        assert.equal(cur.status, attempt === 1 ? 'pending' : 'retrying');
        h.clock.set(cur.next_attempt_at!);
        await h.work();
        assert.equal((await row(id)).attempts, attempt);
      }
      const gaveUp = await row(id);
      assert.equal(gaveUp.status, 'giving_up');
      assert.equal(gaveUp.next_attempt_at, null);
      assert.deepEqual(
        (await x.history('?status=giving_up')).json.map((v: { id: string }) => v.id),
        [id],
      );
      assert.deepEqual(
        (await x.history('?status=failed')).json.map((v: { id: string }) => v.id),
        [id],
      );

      x.accept();
      h.clock.advance(3 * 24 * 60 * MIN);
      const r = await x.replay(id);
      assert.equal(r.status, 202, r.text);
      assert.equal(r.json.event_id, eventId);
      assert.equal((await row(id)).status, 'giving_up', 'the source delivery stays as it was');
      await h.work();
      assert.equal(x.received().length, 1);
      assert.equal(x.received()[0]!.event.event_id, eventId);
      assert.equal((await row(r.json.delivery_id)).status, 'succeeded');

      // A second replay of the same source is allowed too (any state, any number of times).
      h.clock.advance(1);
      const again = await x.replay(id);
      assert.equal(again.status, 202);
      await h.work();
      assert.equal(x.received().length, 2);

      // Paging, newest first: limit, then before = the last id seen; a short page is the last.
      const all = (await x.history()).json.map((v: { id: string }) => v.id);
      assert.deepEqual(all, [again.json.delivery_id, r.json.delivery_id, id]);
      const p1 = await x.history('?limit=2');
      assert.deepEqual(
        p1.json.map((v: { id: string }) => v.id),
        all.slice(0, 2),
      );
      const p2 = await x.history(`?limit=2&before=${all[1]}`);
      assert.deepEqual(
        p2.json.map((v: { id: string }) => v.id),
        all.slice(2),
      );
      assert.deepEqual((await x.history(`?before=${all[2]}`)).json, []);
      assert.deepEqual(
        (await x.history(`?status=succeeded&before=${all[0]}`)).json.map((v: { id: string }) => v.id),
        [all[1]],
      );
      const other = await hookOnReceiver();
      await other.sendTest();
      const foreign = (await other.history()).json[0].id;
      for (const before of [foreign, 'del_missing']) {
        const bad = await x.history(`?before=${before}`);
        assert.equal(bad.status, 400, bad.text);
        assert.equal(bad.json.code, 'invalid_request');
        assert.equal(bad.json.meta.field, 'before');
      }
      for (const limit of ['0', '101', 'x']) {
        const bad = await x.history(`?limit=${limit}`);
        assert.equal(bad.status, 400, `limit ${limit}`);
        assert.equal(bad.json.meta.field, 'limit');
      }
    });

    test('replay is 404 for ids of another workspace, of another hook or missing, and writes nothing', async () => {
      const a = await hookOnReceiver();
      const b = await hookOnReceiver();
      await a.sendTest();
      await b.sendTest();
      const aDelivery = (await a.history()).json[0].id;
      const bDelivery = (await b.history()).json[0].id;
      // a second hook of workspace a, to show that a delivery must be the named hook's own
      const aSecond = await h.request('POST', '/v1/hooks', {
        token: a.t.token,
        body: { target_url: rx.url('/r/second') },
      });
      assert.equal(aSecond.status, 201);
      const before = await deliveryCount();
      for (const [label, call] of [
        ["b's hook and delivery, with a's key", () => a.replay(bDelivery, b.hook.id)],
        ["a's hook, b's delivery", () => a.replay(bDelivery)],
        ["b's hook, a's delivery, with a's key", () => a.replay(aDelivery, b.hook.id)],
        ["a's other hook, a's delivery", () => a.replay(aDelivery, aSecond.json.id)],
        ['a missing delivery', () => a.replay('del_000000000000000000000000')],
        ['a missing hook', () => a.replay(aDelivery, 'hook_000000000000000000000000')],
      ] as const) {
        const r = await call();
        assert.equal(r.status, 404, `${label}: ${r.text}`);
        assert.deepEqual(r.json, { error: r.json.error, code: 'not_found' }, label);
      }
      assert.equal(await deliveryCount(), before, 'nothing written');
      const own = await a.replay(aDelivery);
      assert.equal(own.status, 202, 'the same ids in their own workspace work');
      assert.equal(await deliveryCount(), before + 1);
    });

    test("a deleted hook's pending retries stop, its deliveries cannot be replayed, and nothing is sent", async () => {
      const x = await hookOnReceiver();
      await x.sendTest();
      await h.work();
      const [dv] = (await x.history()).json;
      assert.equal(dv.status, 'retrying');
      const attemptRows = async () =>
        (await h.db.kysely.selectFrom('delivery_attempts').select('attempt').where('delivery_id', '=', dv.id).execute())
          .length;
      assert.equal(await attemptRows(), 1);

      assert.equal((await x.api('DELETE', `/v1/hooks/${x.hook.id}`)).status, 204);
      x.accept(); // from now on any delivery to this path would be verified and recorded
      const before = await deliveryCount();
      const r = await x.replay(dv.id);
      assert.equal(r.status, 404, r.text);
      assert.equal(r.json.code, 'not_found');
      assert.equal((await x.history()).status, 404);
      assert.equal(await deliveryCount(), before, 'the refused replay wrote nothing');

      h.clock.set(Date.parse(dv.next_attempt_at) + 24 * 60 * MIN);
      await h.work();
      assert.equal(x.received().length, 0, 'the receiver got nothing');
      const end = await row(dv.id);
      assert.equal(end.status, 'giving_up');
      assert.equal(end.last_error, 'hook deleted');
      assert.equal(end.attempts, 1, 'no attempt was made');
      assert.equal(end.next_attempt_at, null);
      assert.equal(await attemptRows(), 1);
      h.clock.advance(7 * 24 * 60 * MIN);
      await h.work();
      assert.equal(x.received().length, 0);
    });
  });
}
