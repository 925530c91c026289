// The SQLite driver waits for another connection's write lock on a timer, not inside SQLite: the event loop keeps
// running while it waits. Transactions hold the write lock from BEGIN. Another connection's commit is seen by
// watchWork. A claim with nothing due takes no write lock.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { openDb, WORK_POLL_MS, type Db } from './db.js';
import { claimLeases } from '../jobs/lease.repo.js';
import { DELIVERY_LEASE } from '../webhooks/deliveries.repo.js';

describe('SQLite: waiting for the write lock', () => {
  let dir: string;
  let db: Db;
  let other: Database.Database;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-sqlite-driver-'));
    const file = path.join(dir, 'signet.db');
    db = await openDb(`sqlite:${file}`);
    await sql`create table probe (n integer)`.execute(db.kysely);
    other = new Database(file);
    other.pragma('busy_timeout = 0');
  });
  after(async () => {
    other.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a write that meets another connection’s lock waits with the event loop running, then runs', async () => {
    other.exec('begin immediate');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 2);
    // The lock is released by a timer in this same process: a wait inside SQLite would never let it fire. (Timed
    // against the release itself: a timer counts from the event loop's cached time and may fire early by as much.)
    let releasedAt = Infinity;
    const release = setTimeout(() => {
      other.exec('commit');
      releasedAt = performance.now();
    }, 60);
    try {
      await sql`insert into probe (n) values (1)`.execute(db.kysely);
      const ranAt = performance.now();
      assert.ok(ranAt >= releasedAt, `it waited for the lock (released: ${releasedAt < Infinity})`);
      assert.ok(ticks >= 5, `timers ran while it waited (${ticks} ticks)`);
      const rows = await sql<{ n: number }>`select n from probe`.execute(db.kysely);
      assert.deepEqual(rows.rows, [{ n: 1 }]);
    } finally {
      clearInterval(ticker);
      clearTimeout(release);
      if (other.inTransaction) other.exec('rollback');
    }
  });

  test('a transaction holds the write lock from BEGIN, before its first write', async () => {
    await db.kysely.transaction().execute(async (trx) => {
      await sql`select count(*) from probe`.execute(trx);
      assert.throws(() => other.exec('insert into probe (n) values (2)'), { code: 'SQLITE_BUSY' });
    });
    other.exec('insert into probe (n) values (3)');
  });

  test('watchWork is called after another connection commits, and not for this connection’s own writes', async () => {
    const calls: (string | null)[] = [];
    const unwatch = db.watchWork((t) => calls.push(t));
    try {
      await sql`insert into probe (n) values (4)`.execute(db.kysely);
      await new Promise((r) => setTimeout(r, WORK_POLL_MS * 4));
      assert.deepEqual(calls, [], 'own commit');
      other.exec('insert into probe (n) values (5)');
      const t0 = performance.now();
      while (calls.length === 0 && performance.now() - t0 < 1000) await new Promise((r) => setTimeout(r, 2));
      assert.deepEqual(calls, [null]);
      assert.ok(performance.now() - t0 < WORK_POLL_MS * 5, 'seen within a few polls');
    } finally {
      unwatch();
    }
  });

  test('a claim that finds nothing due takes no write lock', async () => {
    other.exec('begin immediate');
    try {
      const t0 = performance.now();
      const claimed = await claimLeases(db, DELIVERY_LEASE, {
        now: Date.now(),
        workerId: 'w',
        leaseMs: 60_000,
        limit: 10,
      });
      assert.deepEqual(claimed, []);
      assert.ok(performance.now() - t0 < 50, 'answered without waiting for the other writer');
    } finally {
      other.exec('rollback');
    }
  });
});
