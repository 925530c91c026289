// The due queue (migration 028), on both databases: the migration queues the open deliveries an older schema holds,
// with their claims; every inserted open delivery is queued, a settled one is not; a delivery's deletion takes its
// queue row; a record is applied only under the claim it was made under, and a delivery that stays open is queued
// again unclaimed.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { ManualClock } from '../lib/clock.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { claimDue, recordOutcomes, type AttemptOutcome } from './deliveries.repo.js';
import { deliveriesWhere, seed } from './testing/dispatcher.js';

const pg = await postgresForTests();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-queue-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function before028(kind: 'sqlite' | 'postgres') {
  if (kind === 'postgres') return freshPostgres((pg as { url: string }).url, '027-search-keys-plpgsql');
  const db: Db = await openDb(`sqlite:${path.join(tmp, `${Math.random()}.db`)}`, { migrate: false });
  await migrateToLatest(db, '027-search-keys-plpgsql');
  return { db, drop: () => db.close() };
}

const queue = (db: Db) =>
  sql<{ id: string; next_attempt_at: number; attempts: number; claimed_by: string | null }>`select id,
    next_attempt_at, attempts, claimed_by from delivery_queue order by id`
    .execute(db.kysely)
    .then((r) => r.rows.map((q) => ({ ...q, next_attempt_at: Number(q.next_attempt_at) })));

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`the delivery queue (${kind})`, { skip: kind === 'postgres' && 'skip' in pg ? pg.skip : false }, () => {
    test('the migration queues the open deliveries with their claims; inserts queue open rows only', async () => {
      const { db, drop } = await before028(kind);
      try {
        const clock = new ManualClock(Date.parse('2026-12-06T00:00:00Z'));
        const s = await seed(db, clock, 'http://127.0.0.1:9/hook', 3);
        const [a, b, c] = s.eventIds;
        const set = (eventId: string, values: Record<string, unknown>) =>
          db.kysely
            .updateTable('deliveries')
            .set(values as never)
            .where('event_id', '=', eventId!)
            .execute();
        await set(a!, { status: 'retrying', attempts: 2, next_attempt_at: clock.now() + 5 });
        await set(b!, { status: 'succeeded', attempts: 1, next_attempt_at: null });
        await sql`update deliveries set claimed_by = 'w', claim_expires_at = ${clock.now() + 60_000}
          where event_id = ${c!}`.execute(db.kysely);
        await migrateToLatest(db);

        const rows = Object.fromEntries(
          await Promise.all(s.eventIds.map(async (e) => [e, (await deliveriesWhere(db, 'event_id', e))[0]!] as const)),
        );
        assert.deepEqual(
          [rows[a!]!.queued_attempts, rows[a!]!.queued_at, rows[a!]!.claimed_by],
          [2, clock.now() + 5, null],
        );
        assert.equal(rows[b!]!.queued_attempts, null, 'a settled delivery is not queued');
        assert.deepEqual([rows[c!]!.claimed_by, Number(rows[c!]!.claim_expires_at)], ['w', clock.now() + 60_000]);

        // New deliveries of a new event: queued by the trigger, due when they were made.
        const more = await seed(db, clock, 'http://127.0.0.1:9/other', 1);
        const [fresh] = await deliveriesWhere(db, 'event_id', more.eventIds[0]!);
        assert.deepEqual([fresh!.queued_attempts, fresh!.queued_at], [0, clock.now()]);

        // A delivery's deletion takes its queue row (purge deletes deliveries by event).
        await db.kysely.deleteFrom('delivery_attempts').execute();
        await db.kysely.deleteFrom('deliveries').where('event_id', '=', a!).execute();
        assert.equal((await queue(db)).length, 2);
      } finally {
        await drop();
      }
    });

    test('a record applies only under its claim; a retried delivery is queued again, unclaimed', async () => {
      const { db, drop } = await before028(kind);
      try {
        await migrateToLatest(db);
        const clock = new ManualClock(Date.parse('2026-12-06T00:00:00Z'));
        await seed(db, clock, 'http://127.0.0.1:9/hook', 3);
        const claimed = await claimDue(db, { now: clock.now(), workerId: 'a', leaseMs: 60_000, limit: 10 });
        assert.equal(claimed.length, 3);
        assert.deepEqual(
          (await queue(db)).map((q) => q.claimed_by),
          ['a', 'a', 'a'],
        );
        const outcome = (i: number, ok: boolean, attemptsAtClaim = 0): AttemptOutcome => ({
          kind: 'attempt',
          deliveryId: claimed[i]!.id,
          attemptsAtClaim,
          ok,
          startedAt: clock.now(),
          durationMs: 3,
          statusCode: ok ? 200 : 500,
          responseBody: null,
          error: ok ? null : 'non-2xx response: 500',
          nextAttemptAt: ok ? null : clock.now() + 60_000,
          recordedAt: clock.now(),
        });
        // Another worker's record, and one made at a stale attempt count, change nothing.
        assert.equal(await recordOutcomes(db, 'b', [outcome(0, true)]), 0);
        assert.equal(await recordOutcomes(db, 'a', [outcome(0, true, 1)]), 0);
        assert.equal((await queue(db)).length, 3);
        // Under the claim: a success leaves the queue, a failure is queued again for its retry.
        assert.equal(await recordOutcomes(db, 'a', [outcome(0, true), outcome(1, false)]), 2);
        const left = await queue(db);
        assert.deepEqual(
          left.map((q) => [q.id, q.attempts, q.next_attempt_at, q.claimed_by]),
          [
            [claimed[1]!.id, 1, clock.now() + 60_000, null],
            [claimed[2]!.id, 0, claimed[2]!.dueAt, 'a'],
          ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
        );
        // deliveriesWhere checks each row against its queue row.
        const rows = await deliveriesWhere(db, 'd.id', claimed[1]!.id);
        assert.deepEqual([rows[0]!.status, rows[0]!.attempts], ['retrying', 1]);
      } finally {
        await drop();
      }
    });
  });
}
