// The key-use audit through the real app on SQLite and PostgreSQL: rows per request, paging, pruning, a hung write.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startHarness, type Harness, type HarnessOptions } from '../testing/harness.js';
import { postgresForTests } from '../testing/services.js';
import type { Db } from '../db/db.js';
import { KEY_USE_RETENTION_MS } from '../limits.js';
import { KEY_USE_INSERT_CHUNK, listKeyUses, type KeyUse } from './key-uses.repo.js';
import { revokeKey, setAllowedIps, setRateLimit } from './keys.repo.js';
import { countRows } from './testing/key-uses.js';

const DAY = 86_400_000;
const pgCheck = await postgresForTests();
const pgOptions: HarnessOptions = 'url' in pgCheck ? { database: { postgresAdminUrl: pgCheck.url } } : {};
const pgSkip = 'skip' in pgCheck ? pgCheck.skip : false;

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
