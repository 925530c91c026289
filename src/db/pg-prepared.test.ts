import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { openDb, type Db } from './db.js';
import { prepared } from './pg-prepared.js';
import { ManualClock } from '../lib/clock.js';
import { claimDue } from '../webhooks/deliveries.repo.js';
import { seed } from '../webhooks/testing/dispatcher.js';

const pgCheck = await postgresForTests();
const skip = 'skip' in pgCheck ? pgCheck.skip : false;

describe('PostgreSQL: statements marked prepared run by name', { skip }, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Db;
  before(async () => {
    fresh = await freshPostgres((pgCheck as { url: string }).url);
    // One connection, so the session this test asks about is the one that ran the statements.
    db = await openDb(fresh.url, { poolMax: 1, migrate: false });
  });
  after(async () => {
    await db.close();
    await fresh.drop();
  });

  const session = async () =>
    (
      await sql<{
        name: string;
        statement: string;
      }>`select name, statement from pg_prepared_statements order by name`.execute(db.kysely)
    ).rows;

  test('a marked statement is prepared once per connection and answers each run with its own values', async () => {
    const marked = (n: number) => sql<{ n: number }>`select ${n}::int + 1 as n${prepared}`.execute(db.kysely);
    assert.deepEqual((await marked(1)).rows, [{ n: 2 }]);
    assert.deepEqual((await marked(41)).rows, [{ n: 42 }]);
    await sql`select ${5}::int as unmarked`.execute(db.kysely);
    const rows = await session();
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.match(rows[0]!.name, /^signet_[0-9a-f]{24}$/);
    assert.match(rows[0]!.statement, /\+ 1 as n \/\* prepared \*\/$/);
    // Inside a transaction too, on the same name.
    const inTrx = await db.kysely
      .transaction()
      .execute((trx) => sql<{ n: number }>`select ${6}::int + 1 as n${prepared}`.execute(trx));
    assert.deepEqual(inTrx.rows, [{ n: 7 }]);
    assert.equal((await session()).length, 1);
  });

  test('switched off (DATABASE_PREPARED_STATEMENTS=0), a marked statement runs unnamed', async () => {
    const off = await openDb(fresh.url, { poolMax: 1, migrate: false, preparedStatements: false });
    try {
      const r = await sql<{ n: number }>`select ${2}::int * 3 as n${prepared}`.execute(off.kysely);
      assert.deepEqual(r.rows, [{ n: 6 }]);
      const named = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(off.kysely);
      assert.deepEqual(named.rows, [{ n: 0 }]);
    } finally {
      await off.close();
    }
  });

  test('the dispatcher claim (a lease claim with its columns named) runs by name', async () => {
    const clock = new ManualClock(Date.parse('2026-11-23T10:00:00Z'));
    // A due delivery: a claim that finds nothing stops at its look (a plain read) and never runs the UPDATE.
    await seed(db, clock, 'http://127.0.0.1:9/hook');
    const claimed = await claimDue(db, { now: clock.now(), workerId: 'w1', leaseMs: 1000, limit: 10 });
    assert.equal(claimed.length, 1);
    const rows = await session();
    assert.ok(
      rows.some((r) => r.statement.startsWith('update "delivery_queue" set "claimed_by"')),
      JSON.stringify(rows.map((r) => r.statement.slice(0, 60))),
    );
  });
});
