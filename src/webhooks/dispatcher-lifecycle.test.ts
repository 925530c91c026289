// The webhook dispatcher on SQLite around its deliveries: replay, deleted hooks, the worker's life, a killed worker.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openDb } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { getDelivery, listDeliveries, replayDelivery } from './hooks.service.js';
import { createDispatcher } from './dispatcher.js';
import type { DeliveryStatus } from './states.js';
import {
  agent,
  attemptsOf,
  db,
  deliveryOf,
  dispatcher,
  HOUR,
  neverSlow,
  receiver,
  seed,
  stripe,
  useDispatcherDb,
  type Seeded,
} from './testing/dispatcher.js';

describe('webhook dispatcher (SQLite)', () => {
  useDispatcherDb();

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
      const d = createDispatcher({
        db: fileDb,
        clock,
        workerId: 'bench',
        agent,
        allowPrivateNetwork: true,
        ...neverSlow,
      });
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
