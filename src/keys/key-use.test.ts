import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startHarness, type Harness, type HarnessOptions } from '../testing/harness.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { ManualClock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { KEY_USE_RETENTION_MS } from '../limits.js';
import { createKeyUseRecorder, pruneKeyUsesJob } from './key-use.js';
import { KEY_USE_INSERT_CHUNK, insertKeyUses, listKeyUses, type KeyUse, type KeyUseRow } from './key-uses.repo.js';
import { revokeKey, setAllowedIps, setRateLimit } from './keys.repo.js';

const DAY = 86_400_000;
const pgCheck = await postgresForTests();
const pgOptions: HarnessOptions = 'url' in pgCheck ? { database: { postgresAdminUrl: pgCheck.url } } : {};
const pgSkip = 'skip' in pgCheck ? pgCheck.skip : false;

const countRows = async (db: Db, keyId?: string): Promise<number> => {
  let q = db.kysely.selectFrom('key_uses').select((eb) => eb.fn.countAll<number>().as('n'));
  if (keyId) q = q.where('key_id', '=', keyId);
  return Number((await q.executeTakeFirstOrThrow()).n);
};

/** Every row of a key, page by page (`limit` rows each), following the cursor. */
async function allPages(db: Db, workspaceId: string, keyId: string, limit: number): Promise<KeyUse[][]> {
  const pages: KeyUse[][] = [];
  let before: { at: number; id: number } | undefined;
  for (;;) {
    const page = await listKeyUses(db.kysely, { workspaceId, keyId, before, limit });
    if (page.length === 0) return pages;
    pages.push(page);
    const last = page[page.length - 1]!;
    before = { at: last.at, id: last.id };
  }
}

const brief = (r: KeyUse) => ({ at: r.at, ip: r.ip_masked, method: r.method, route: r.route, status: r.status });

function appSuite(name: string, opts: HarnessOptions, skip: string | false) {
  describe(name, { skip }, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(opts);
    });
    after(() => h?.close());

    test('one row per request made with the key: time, masked IP, method, route pattern, status; newest first', async () => {
      const t = await h.tenant();
      await setAllowedIps(h.db.kysely, t.keyId, ['127.0.0.2']);
      const expected: ReturnType<typeof brief>[] = [];
      const call = async (
        method: string,
        url: string,
        want: { status: number; route: string; ip?: string },
        o: { body?: unknown; from?: string } = {},
      ) => {
        h.clock.advance(1000);
        const r = await h.request(method, url, { token: t.token, body: o.body, localAddress: o.from ?? '127.0.0.2' });
        assert.equal(r.status, want.status, `${method} ${url}: ${r.text}`);
        expected.push({
          at: h.clock.now(),
          ip: want.ip ?? '127.0.0.x',
          method,
          route: want.route,
          status: want.status,
        });
      };
      await call('GET', '/v1/hooks', { status: 200, route: '/v1/hooks' });
      await call('POST', '/v1/hooks', { status: 400, route: '/v1/hooks' }, { body: { events: [] } });
      await call('GET', '/v1/no-such-thing/hook_123?secret=1', { status: 404, route: '(unknown route)' });
      await call('GET', '/v1/hooks', { status: 403, route: '/v1/hooks' }, { from: '127.0.0.3' });
      await call('DELETE', '/v1/hooks/hook_missing', { status: 404, route: '/v1/hooks/:id' });
      await call('GET', '/v1/me', { status: 200, route: '/v1/me' });
      await call('HEAD', '/v1/me', { status: 200, route: '/v1/me' });
      // Two requests at the same instant: the id orders them.
      await call('GET', '/v1/hooks', { status: 200, route: '/v1/hooks' });
      h.clock.advance(-1000);
      await call('GET', '/v1/hooks/hook_x/deliveries', { status: 404, route: '/v1/hooks/:id/deliveries' });

      // Not made with a stored key, or outside the gate: nothing recorded anywhere.
      await h.app.flushKeyUses();
      const baseline = await countRows(h.db);
      assert.equal((await h.request('GET', '/v1/hooks')).status, 401);
      assert.equal((await h.request('GET', '/v1/hooks', { token: 'svk_live_' + '0'.repeat(32) })).status, 401);
      assert.equal((await h.request('GET', '/v1/hooks', { token: 'not-a-key' })).status, 401);
      assert.equal((await h.request('GET', '/v1/openapi.json', { token: t.token })).status, 200);
      assert.equal((await h.request('GET', '/healthz', { token: t.token })).status, 200);
      await h.app.flushKeyUses();
      assert.equal(await countRows(h.db), baseline, 'no row for requests without a stored key or outside the gate');

      const rows = await listKeyUses(h.db.kysely, { workspaceId: t.workspaceId, keyId: t.keyId, limit: 100 });
      assert.equal(rows.length, expected.length, 'exactly one row per request');
      const newestFirst = expected
        .map((e, i) => ({ e, i }))
        .sort((a, b) => b.e.at - a.e.at || b.i - a.i)
        .map((x) => x.e);
      assert.deepEqual(rows.map(brief), newestFirst);
      assert.ok(
        rows.every((r) => r.key_id === t.keyId && r.workspace_id === t.workspaceId),
        'rows.every((r) => r.key_id === t.keyId && r.workspace_id === t.workspaceId)',
      );
      assert.ok(!JSON.stringify(rows).includes('secret'), 'the raw URL is never stored');
    });

    test('pages by cursor without gaps or duplicates; other keys and workspaces are not listed', async () => {
      const t = await h.tenant();
      const second = await h.key(t.workspaceId);
      const other = await h.tenant();
      for (let i = 0; i < 7; i++) {
        if (i % 3 !== 0) h.clock.advance(10); // some share a timestamp
        assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
        assert.equal((await h.request('GET', '/v1/me', { token: second.plaintext })).status, 200);
        assert.equal((await h.request('GET', '/v1/hooks', { token: other.token })).status, 200);
      }
      await h.app.flushKeyUses();
      const all = await listKeyUses(h.db.kysely, { workspaceId: t.workspaceId, keyId: t.keyId, limit: 100 });
      assert.equal(all.length, 7);
      for (let i = 1; i < all.length; i++) {
        const [a, b] = [all[i - 1]!, all[i]!];
        assert.ok(a.at > b.at || (a.at === b.at && a.id > b.id), 'strictly newest first by (at, id)');
      }
      for (const limit of [1, 2, 3, 7]) {
        const pages = await allPages(h.db, t.workspaceId, t.keyId, limit);
        assert.deepEqual(pages.flat(), all, `pages of ${limit}`);
        assert.ok(
          pages.every((p) => p.length <= limit),
          'pages.every((p) => p.length <= limit)',
        );
      }
      // Another key of the same workspace, and the same key asked for from another workspace.
      const seconds = await listKeyUses(h.db.kysely, { workspaceId: t.workspaceId, keyId: second.id, limit: 100 });
      assert.equal(seconds.length, 7);
      assert.ok(
        seconds.every((r) => r.key_id === second.id && r.route === '/v1/me'),
        "seconds.every((r) => r.key_id === second.id && r.route === '/v1/me')",
      );
      assert.deepEqual(
        await listKeyUses(h.db.kysely, { workspaceId: other.workspaceId, keyId: t.keyId, limit: 100 }),
        [],
        'a key id from another workspace lists nothing',
      );
      assert.deepEqual(
        await listKeyUses(h.db.kysely, { workspaceId: t.workspaceId, keyId: other.keyId, limit: 100 }),
        [],
      );
      const cursorPastAll = { at: all[all.length - 1]!.at, id: all[all.length - 1]!.id };
      assert.deepEqual(
        await listKeyUses(h.db.kysely, { workspaceId: t.workspaceId, keyId: t.keyId, before: cursorPastAll, limit: 5 }),
        [],
      );
    });

    test('refusals after the key was found are recorded too: rate limit (429), revoked (401), plan (402)', async () => {
      const t = await h.tenant();
      await setRateLimit(h.db.kysely, t.keyId, 1);
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 429);
      await revokeKey(h.db.kysely, t.keyId, 'test', h.clock.now());
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 401);
      const free = await h.tenant('free');
      assert.equal((await h.request('GET', '/v1/me', { token: free.token })).status, 402);
      await h.app.flushKeyUses();
      const rows = await listKeyUses(h.db.kysely, { workspaceId: t.workspaceId, keyId: t.keyId, limit: 10 });
      assert.deepEqual(
        rows.map((r) => r.status),
        [401, 429, 200],
      );
      const freeRows = await listKeyUses(h.db.kysely, { workspaceId: free.workspaceId, keyId: free.keyId, limit: 10 });
      assert.deepEqual(
        freeRows.map((r) => [r.route, r.status]),
        [['/v1/me', 402]],
      );
    });

    test('the prune job deletes rows older than 30 days, and only those', async () => {
      const t = await h.tenant();
      const t0 = h.clock.now();
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
      h.clock.advance(DAY);
      assert.equal((await h.request('GET', '/v1/me', { token: t.token })).status, 200);
      await h.app.flushKeyUses();
      const list = () => listKeyUses(h.db.kysely, { workspaceId: t.workspaceId, keyId: t.keyId, limit: 10 });
      assert.equal((await list()).length, 2);

      h.clock.set(t0 + KEY_USE_RETENTION_MS);
      await h.runtime.runJob('prune-key-uses');
      assert.equal((await list()).length, 2, 'exactly 30 days old: still kept');

      h.clock.set(t0 + KEY_USE_RETENTION_MS + 1);
      const r = await h.runtime.runJob('prune-key-uses');
      assert.ok(Number(r.deleted) >= 1, 'Number(r.deleted) >= 1');
      assert.deepEqual(
        (await list()).map((x) => x.route),
        ['/v1/me'],
      );

      h.clock.advance(DAY);
      await h.runtime.runJob('prune-key-uses');
      assert.deepEqual(await list(), []);
    });

    test('a burst of concurrent requests: one row each, written in several INSERTs of one flush', async () => {
      const t = await h.tenant();
      // More rows than one INSERT takes, so a flush writes several statements in one transaction.
      const n = KEY_USE_INSERT_CHUNK + 3;
      await Promise.all(
        Array.from({ length: n }, () => h.request('GET', '/v1/me', { token: t.token }).then((r) => r.status)),
      );
      await h.app.flushKeyUses();
      assert.equal(await countRows(h.db, t.keyId), n);
    });
  });
}

appSuite('key-use audit (SQLite)', {}, false);
appSuite('key-use audit (PostgreSQL)', pgOptions, pgSkip);

describe('key-use audit: a write that hangs delays no response (PostgreSQL)', { skip: pgSkip }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(pgOptions);
  });
  after(() => h?.close());

  test('while the table is locked, requests are answered and the flush waits', async () => {
    const t = await h.tenant();
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
    await h.app.flushKeyUses();
    // A second connection holds an exclusive lock on key_uses: every insert into it blocks until released.
    const dbName = (await h.db.kysely.selectNoFrom((eb) => eb.fn<string>('current_database').as('d')).execute())[0]!.d;
    const u = new URL('url' in pgCheck ? pgCheck.url : '');
    u.pathname = `/${dbName}`;
    const locker = new pg.Client(u.toString());
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE key_uses IN ACCESS EXCLUSIVE MODE');
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
      let flushed = false;
      const flushing = h.app.flushKeyUses().then(() => (flushed = true));
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5000).unref());
      for (let i = 0; i < 5; i++) {
        const r = await Promise.race([h.request('GET', '/v1/hooks', { token: t.token }), timeout]);
        assert.notEqual(r, 'timeout', 'a request waited for the key-use write');
        assert.equal((r as { status: number }).status, 200);
      }
      assert.equal(flushed, false, 'the flush is still waiting for the lock');
      await locker.query('COMMIT');
      await flushing;
      assert.equal(await countRows(h.db, t.keyId), 2, 'that flush took the rows noted before it');
      await h.app.flushKeyUses();
      assert.equal(await countRows(h.db, t.keyId), 7);
    } finally {
      await locker.end();
    }
  });
});

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
    assert.deepEqual(await job.run(), { deleted: 25 });
    const left = await listKeyUses(db.kysely, { workspaceId: 'ws_a', keyId: 'key_prune', limit: 100 });
    assert.deepEqual(
      left.map((r) => r.at).reverse(),
      kept.map((r) => r.at),
    );
    assert.deepEqual(await job.run(), { deleted: 0 });
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
