// The key-use recorder on its own: note and flush, batches, a database without its table, the prune job's batches.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { ManualClock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { createKeyUseRecorder, pruneKeyUsesJob } from './key-use.js';
import { insertKeyUses, listKeyUses, type KeyUseRow } from './key-uses.repo.js';
import { countRows } from './testing/key-uses.js';

const DAY = 86_400_000;
const pgCheck = await postgresForTests();
const pgSkip = 'skip' in pgCheck ? pgCheck.skip : false;

/** A database migrated up to 006 only (a rolling upgrade with SIGNET_AUTO_MIGRATE=0), on each engine. */
const engines: { name: string; skip: string | false; open(): Promise<{ db: Db; drop(): Promise<void> }> }[] = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-keyuse-'));
      const db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`, { migrate: false });
      await migrateToLatest(db, '006-embedded-sessions');
      return {
        db,
        async drop() {
          await db.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    open: () => freshPostgres('url' in pgCheck ? pgCheck.url : '', '006-embedded-sessions'),
  },
];

const row = (i: number): KeyUseRow => ({
  key_id: 'key_a',
  workspace_id: 'ws_a',
  at: 1_000_000 + i,
  ip_masked: i % 2 ? '10.0.0.x' : null,
  method: 'GET',
  route: '/v1/hooks',
  status: 200,
});

for (const engine of engines) {
  describe(`key-use recorder on a database without migration 007 (${engine.name})`, { skip: engine.skip }, () => {
    test('writes fail quietly and memory stays bounded; after the migration the newest rows are written', async () => {
      const { db, drop } = await engine.open();
      const warnings: object[] = [];
      const logger: Logger = { info() {}, warn: (o) => void warnings.push(o), error() {} };
      const rec = createKeyUseRecorder(db, { max: 100, flushAt: 1_000_000, intervalMs: 3_600_000, logger });
      try {
        for (let i = 0; i < 60; i++) {
          const r = row(i);
          rec.note(r.key_id, r.workspace_id, r.at, r.ip_masked, r.method, r.route, r.status);
        }
        await rec.flush();
        assert.deepEqual(rec.stats(), { pending: 60, dropped: 0 }, 'a failed write keeps its rows');
        for (let i = 60; i < 250; i++) {
          const r = row(i);
          rec.note(r.key_id, r.workspace_id, r.at, r.ip_masked, r.method, r.route, r.status);
        }
        await rec.flush();
        await rec.flush();
        assert.deepEqual(rec.stats(), { pending: 100, dropped: 150 }, 'capped: the oldest are dropped and counted');
        assert.equal(warnings.filter((w) => 'err' in w).length, 1, 'one warning per failing streak');
        assert.ok(
          warnings.some((w) => (w as { total?: number }).total === 150),
          'the drops are reported',
        );

        const job = pruneKeyUsesJob({ db, clock: new ManualClock(10 * DAY) });
        assert.deepEqual(await job.run(), { deleted: 0 }, 'the prune job does not fail without the table');

        await migrateToLatest(db);
        await rec.flush();
        assert.deepEqual(rec.stats(), { pending: 0, dropped: 150 });
        const rows = await listKeyUses(db.kysely, { workspaceId: 'ws_a', keyId: 'key_a', limit: 1000 });
        assert.deepEqual(
          rows.map((r) => r.at).reverse(),
          Array.from({ length: 100 }, (_, i) => row(150 + i).at),
          'the newest 100, each once, in order',
        );
        assert.deepEqual(rows.at(-1), { ...row(150), id: rows.at(-1)!.id });
      } finally {
        await rec.close();
        await drop();
      }
    });
  });
}

describe('key-use recorder', () => {
  let dir: string;
  let db: Db;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-keyuse-'));
    db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  });
  after(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('note() only stores: nothing is written until a flush, which writes each row once', async () => {
    const rec = createKeyUseRecorder(db, { flushAt: 1_000_000, intervalMs: 3_600_000 });
    for (let i = 0; i < 10; i++) {
      const r = { ...row(i), key_id: 'key_note' };
      rec.note(r.key_id, r.workspace_id, r.at, r.ip_masked, r.method, r.route, r.status);
    }
    assert.equal(await countRows(db, 'key_note'), 0);
    assert.equal(rec.stats().pending, 10);
    await Promise.all([rec.flush(), rec.flush()]);
    assert.equal(await countRows(db, 'key_note'), 10);
    await rec.close();
    assert.equal(await countRows(db, 'key_note'), 10);
  });

  test('a full batch is written without waiting for the timer', async () => {
    const rec = createKeyUseRecorder(db, { flushAt: 5, intervalMs: 3_600_000 });
    try {
      for (let i = 0; i < 5; i++) {
        const r = { ...row(i), key_id: 'key_early' };
        rec.note(r.key_id, r.workspace_id, r.at, r.ip_masked, r.method, r.route, r.status);
      }
      for (let i = 0; i < 200 && (await countRows(db, 'key_early')) < 5; i++) await new Promise(setImmediate);
      assert.equal(await countRows(db, 'key_early'), 5);
    } finally {
      await rec.close();
    }
  });

  test('close() writes what is left', async () => {
    const rec = createKeyUseRecorder(db, { flushAt: 1_000_000, intervalMs: 3_600_000 });
    rec.note('key_close', 'ws_a', 1, null, 'POST', '/v1/hooks', 201);
    await rec.close();
    assert.equal(await countRows(db, 'key_close'), 1);
  });

  test('the prune job deletes in batches until none is left, oldest first, newer rows untouched', async () => {
    await db.kysely.deleteFrom('key_uses').execute(); // the other tests' rows are old too
    const now = 100 * DAY;
    const rows = Array.from({ length: 25 }, (_, i) => ({ ...row(i), key_id: 'key_prune', at: now - 40 * DAY + i }));
    const kept = Array.from({ length: 3 }, (_, i) => ({ ...row(i), key_id: 'key_prune', at: now - 29 * DAY + i }));
    await db.kysely.transaction().execute((trx) => insertKeyUses(trx, [...kept, ...rows]));
    const job = pruneKeyUsesJob({ db, clock: new ManualClock(now) }, 10);
    assert.deepEqual(await job.run(), { deleted: 25, batches: 3, more: false, tables: { key_uses: 25 } });
    const left = await listKeyUses(db.kysely, { workspaceId: 'ws_a', keyId: 'key_prune', limit: 100 });
    assert.deepEqual(
      left.map((r) => r.at).reverse(),
      kept.map((r) => r.at),
    );
    assert.equal((await job.run()).deleted, 0);
  });

  test('insertKeyUses splits any count into statements within the parameter limit', async () => {
    for (const n of [1, 2, 127, 128, 129, 300, 1000]) {
      const key = `key_n${n}`;
      await db.kysely.transaction().execute((trx) =>
        insertKeyUses(
          trx,
          Array.from({ length: n }, (_, i) => ({ ...row(i), key_id: key })),
        ),
      );
      const rows = await listKeyUses(db.kysely, { workspaceId: 'ws_a', keyId: key, limit: 2000 });
      assert.equal(rows.length, n);
      assert.deepEqual(
        rows.map((r) => r.at),
        Array.from({ length: n }, (_, i) => row(n - 1 - i).at),
      );
      assert.deepEqual(rows[0], { ...row(n - 1), key_id: key, id: rows[0]!.id });
    }
  });
});
