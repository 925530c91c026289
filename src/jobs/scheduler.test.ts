import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { postgresForTests, freshPostgres } from '../testing/services.js';
import { pruneIdempotencyJob } from '../idempotency/idempotency.js';
import { beginIdempotent } from '../idempotency/idempotency.repo.js';
import { createScheduler, runJob } from './scheduler.js';
import { listRuns } from './scheduler.repo.js';

let counter = 0;
const jobs = {
  'test-counter': { everyMs: 3600_000, run: async () => ({ n: ++counter }) },
};

async function schedulerSuite(db: Db) {
  const clock = new ManualClock(Date.parse('2026-11-22T10:15:00Z'));
  const a = createScheduler({ db, clock, workerId: 'a', jobs });
  const b = createScheduler({ db, clock, workerId: 'b', jobs });
  counter = 0;
  // Several workers ticking at once: each (job, slot) runs exactly once.
  const ran = await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
  assert.equal(ran.flat().filter((n) => n === 'test-counter').length, 1);
  assert.equal(counter, 1);
  clock.advance(44 * 60_000); // 10:59 — same hourly slot
  assert.deepEqual(
    (await Promise.all([a.tick(), b.tick()])).flat().filter((n) => n === 'test-counter'),
    [],
  );
  clock.advance(60_000); // 11:00 — next slot
  await Promise.all([a.tick(), b.tick()]);
  assert.equal(counter, 2);
  const runs = await listRuns(db.kysely, 'test-counter');
  assert.equal(runs.length, 2);
  assert.ok(
    runs.every((r) => r.finished_at !== null),
    'runs.every((r) => r.finished_at !== null)',
  );
  await a.stop();
  await b.stop();
}

describe('scheduler', () => {
  test('one run per slot across workers (SQLite)', async () => {
    const db = await openDb('sqlite::memory:');
    await schedulerSuite(db);
    await db.close();
  });

  test('one run per slot across workers (PostgreSQL)', async (t) => {
    const pg = await postgresForTests();
    if ('skip' in pg) return t.skip(pg.skip);
    const fresh = await freshPostgres(pg.url);
    try {
      await schedulerSuite(fresh.db);
    } finally {
      await fresh.drop();
    }
  });

  test('prune-idempotency removes keys older than 24 hours only', async () => {
    const db = await openDb('sqlite::memory:');
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
    const opts = { lockMs: 1000, ttlMs: 86_400_000 };
    await beginIdempotent(db.kysely, { keyId: 'key_1', idemKey: 'old', fingerprint: 'f' }, clock.now(), opts);
    clock.advance(3600_000);
    await beginIdempotent(db.kysely, { keyId: 'key_1', idemKey: 'new', fingerprint: 'f' }, clock.now(), opts);
    clock.advance(23 * 3600_000);
    const catalogue = { 'prune-idempotency': pruneIdempotencyJob({ db, clock }) };
    assert.equal((await runJob(catalogue, 'prune-idempotency')).deleted, 1);
    const left = await db.kysely.selectFrom('idempotency_keys').select('idem_key').execute();
    assert.deepEqual(
      left.map((r) => r.idem_key),
      ['new'],
    );
    await assert.rejects(runJob(catalogue, 'no-such-job'), /no job "no-such-job"/);
    await db.close();
  });
});
