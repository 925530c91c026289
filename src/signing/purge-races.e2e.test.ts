// A purge (signing/purge.ts) against the webhook writers that touch its document's deliveries while it runs, on
// PostgreSQL through the real app (SQLite runs one writer: nothing falls between a purge's statements). A worker's
// record and a replay held open across a purge are waited for and go too; a replay's record that overtakes the purge
// between its deletes makes it run again, and goes too. Without either, the purge answered 500.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { postgresForTests } from '../testing/services.js';
import { claimDue, recordOutcomes } from '../webhooks/deliveries.repo.js';
import { attemptOutcome } from '../webhooks/testing/dispatcher.js';
import { insertReplay } from '../webhooks/history.repo.js';
import { sentDocument } from './testing/requests.js';
import { purgeRows } from './testing/scan.js';

const pg = await postgresForTests();

describe('purge races (PostgreSQL)', { skip: 'skip' in pg ? pg.skip : false }, () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ database: { postgresAdminUrl: (pg as { url: string }).url } });
  });
  after(async () => {
    await e?.close();
  });

  const create = (title: string) => sentDocument(e, title);
  const purge = (id: string) => e.h.request('DELETE', `/v1/documents/${id}`, { token: e.token });
  // PostgreSQL: runs `open` in a transaction left open until `purge(id)`, started then, waits on a row it holds.
  const purgeWhileHeld = async (id: string, open: (trx: Kysely<Database>) => Promise<void>) => {
    const lockWaits = async () =>
      (
        await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(e.h.db.kysely)
      ).rows[0]!.n;
    let purging: ReturnType<typeof purge> | undefined;
    await e.h.db.kysely.transaction().execute(async (trx) => {
      await open(trx);
      purging = purge(id);
      for (let i = 0; (await lockWaits()) === 0; i++) {
        if (i > 1000) throw new Error('the purge never waited');
        await sleep(10);
      }
    });
    return purging!;
  };
  // A withdrawn document and the delivery of its one event (sent, and delivered by the harness's work()).
  const withdrawnWithDelivery = async (title: string) => {
    const id = await create(title);
    assert.equal((await e.api('POST', `/v1/documents/${id}/withdraw`)).status, 200);
    const source = await e.h.db.kysely
      .selectFrom('deliveries')
      .innerJoin('events', 'events.id', 'deliveries.event_id')
      .select(['deliveries.id', 'deliveries.status'])
      .where('events.document_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(source.status, 'succeeded');
    return { id, source: source.id };
  };

  // A worker's claim, which finds the one delivery `id` due.
  const claimOnly = async (id: string) => {
    const claimed = await claimDue(e.h.db, { now: e.h.clock.now(), workerId: 'racer', leaseMs: 60_000, limit: 400 });
    assert.deepEqual(
      claimed.map((c) => c.id),
      [id],
    );
    return claimed;
  };

  test("a purge racing a worker's record of the document's delivery waits for it, then takes its attempt too", async () => {
    const { id, source } = await withdrawnWithDelivery('Raced by a record');
    // An open delivery of the document (a replay), claimed by a worker now recording it.
    const open = await insertReplay(e.h.db, e.h.db.kysely, source, e.h.clock.now());
    const claimed = await claimOnly(open!.id);
    const outcomes = claimed.map((c) => attemptOutcome(c.id, e.h.clock.now(), { attemptsAtClaim: c.attempts }));
    // The record's statement in a transaction left open until the purge waits on a row it holds.
    const r = await purgeWhileHeld(id, async (trx) => {
      assert.equal(await recordOutcomes({ ...e.h.db, kysely: trx }, 'racer', outcomes), claimed.length);
    });
    assert.equal(r.status, 200, r.text);
    const left = await e.h.db.kysely
      .selectFrom('delivery_attempts')
      .select('delivery_id')
      .where('delivery_id', 'in', [source, open!.id])
      .execute();
    assert.deepEqual(left, [], 'the attempts recorded meanwhile went with their deliveries');
  });

  test("a purge racing a replay of the document's delivery waits for it, then takes the new delivery too", async () => {
    const { id, source } = await withdrawnWithDelivery('Raced by a replay');
    let replayed: string | undefined;
    const r = await purgeWhileHeld(id, async (trx) => {
      replayed = (await insertReplay(e.h.db, trx, source, e.h.clock.now()))?.id;
      assert.ok(replayed, 'the replay was written');
    });
    assert.equal(r.status, 200, r.text);
    const left = await e.h.db.kysely.selectFrom('deliveries').select('id').where('id', '=', replayed!).execute();
    assert.deepEqual(left, [], 'the replayed delivery went with its event');
  });

  test("a purge that a replayed delivery's record overtakes between its deletes runs again, and takes it too", async () => {
    const { id, source } = await withdrawnWithDelivery('Overtaken by a record of a replay');
    // The purge's statement waiting on a lock, if any.
    const waiting = async () =>
      (
        await sql<{ query: string }>`SELECT query FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(e.h.db.kysely)
      ).rows.map((r) => r.query);
    const until = async (what: string, ok: (queries: string[]) => boolean) => {
      for (let i = 0; !ok(await waiting()); i++) {
        if (i > 1000) throw new Error(`the purge never waited ${what}`);
        await sleep(10);
      }
    };
    let purging: ReturnType<typeof purge> | undefined;
    let replayed: string | undefined;
    // A reader of the source's attempts holds the purge at its delete of them, after its locks.
    await e.h.db.kysely.transaction().execute(async (holder) => {
      await sql`SELECT id FROM delivery_attempts WHERE delivery_id = ${source} FOR UPDATE`.execute(holder);
      // A replay in flight as the purge starts: the purge's lock of the deliveries waits for it.
      await e.h.db.kysely.transaction().execute(async (replay) => {
        replayed = (await insertReplay(e.h.db, replay, source, e.h.clock.now()))?.id;
        purging = purge(id);
        await until('on the replay', (q) => q.length > 0);
      });
      await until('on its delete of the attempts', (q) => q.some((s) => /delete from "delivery_attempts"/i.test(s)));
      // Meanwhile a worker claims the replayed delivery and records its attempt; both commit.
      await claimOnly(replayed!);
      const outcome = attemptOutcome(replayed!, e.h.clock.now());
      assert.equal(await recordOutcomes(e.h.db, 'racer', [outcome]), 1);
    });
    const r = await purging!;
    assert.equal(r.status, 200, r.text);
    const left = await e.h.db.kysely
      .selectFrom('delivery_attempts')
      .select('delivery_id')
      .where('delivery_id', 'in', [source, replayed!])
      .execute();
    assert.deepEqual(left, [], 'the attempt recorded meanwhile went with its delivery');
    assert.equal(await purgeRows(e.h.db, id), 1);
  });
});
