import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { createHook, deleteHook, listHooks } from './hooks.repo.js';
import { createHooksService, type HooksService } from './hooks.service.js';
import { createEmitter } from './outbox.repo.js';
import { presentCreatedHook, presentHook } from './presenters.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('hook list cache (SQLite)', () => {
  let dir: string;
  let file: string;
  let db: Db;
  let ws: string;
  let hooks: HooksService;
  const hook = (n: number) =>
    createHook(
      db.kysely,
      { workspaceId: ws, targetUrl: `https://h.example.com/${n}`, events: ['document.completed'], source: 'api' },
      1000 + n,
    );
  const urls = async () => (await hooks.list(ws)).views.map((h) => h.target_url);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-hooks-'));
    file = path.join(dir, 'signet.db');
    db = await openDb(`sqlite:${file}`);
    ws = (await createWorkspace(db.kysely, { name: 'Hooks', tier: 'business' }, 1)).id;
    const clock = new ManualClock();
    hooks = createHooksService({
      db,
      clock,
      emit: createEmitter(clock),
      allowPrivateNetwork: true,
      wakeDeliveries() {},
    });
  });
  after(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('unchanged database: the same list, frozen so that no caller can change what another is answered', async () => {
    await hook(1);
    const a = await hooks.list(ws);
    const b = await hooks.list(ws);
    assert.equal(a, b, 'served from the cache');
    assert.equal(hooks.cachedList(ws, db.probe!.version()), a);
    assert.ok(
      Object.isFrozen(a) && Object.isFrozen(a.views) && Object.isFrozen(a.views[0]),
      'Object.isFrozen(a) && Object.isFrozen(a.views) && Object.isFrozen(a.views[0])',
    );
    assert.throws(() => (a.views as unknown[]).pop());
    assert.equal((await hooks.list(ws)).views.length, 1);
    assert.equal(a.json, JSON.stringify(a.views));
  });

  test('writes on the same connection show at once: createHook, deleteHook, and a raw update', async () => {
    await urls();
    const two = await hook(2);
    assert.deepEqual(await urls(), ['https://h.example.com/1', 'https://h.example.com/2']);
    assert.equal(await deleteHook(db.kysely, ws, two.id, 5000), true);
    assert.deepEqual(await urls(), ['https://h.example.com/1']);
    await db.kysely
      .updateTable('hooks')
      .set({ target_url: 'https://h.example.com/raw' })
      .where('workspace_id', '=', ws)
      .execute();
    assert.deepEqual(await urls(), ['https://h.example.com/raw']);
  });

  test('a write by a second connection shows at once', async () => {
    await urls();
    const other = new Database(file);
    try {
      other.prepare("update hooks set target_url = 'https://h.example.com/other' where workspace_id = ?").run(ws);
    } finally {
      other.close();
    }
    assert.deepEqual(await urls(), ['https://h.example.com/other']);
  });

  test("a request's own reading (req.dataVersion) is validated instead of a fresh one; null reads the database", async () => {
    const urlsAt = async (version: number | null) => (await hooks.list(ws, version)).views.map((h) => h.target_url);
    const before = await urls();
    assert.ok(before.length > 0, 'before.length > 0');
    const reading = db.probe!.version()!;
    const other = new Database(file);
    try {
      other.prepare("update hooks set target_url = 'https://h.example.com/later' where workspace_id = ?").run(ws);
    } finally {
      other.close();
    }
    assert.deepEqual(await urlsAt(reading), before, 'taken before the write: the list as of that reading');
    assert.deepEqual(
      await urlsAt(null),
      before.map(() => 'https://h.example.com/later'),
    );
    assert.deepEqual(
      await urls(),
      before.map(() => 'https://h.example.com/later'),
    );
    assert.notEqual(db.probe!.version(), reading);
  });

  test('a write by another process shows at once', async () => {
    await urls();
    const script =
      "const D = require('better-sqlite3'); const d = new D(process.argv[1]); d.pragma('busy_timeout = 5000');" +
      'd.prepare("update hooks set deleted_at = 1 where workspace_id = ?").run(process.argv[2]); d.close();';
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, ['-e', script, file, ws], { cwd: ROOT }, (err, _o, stderr) =>
        err ? reject(new Error(stderr)) : resolve(),
      ),
    );
    assert.deepEqual(await urls(), []);
  });

  test('without a reading (inside a transaction; PostgreSQL) the database is read and nothing is kept', async () => {
    await createHook(
      db.kysely,
      { workspaceId: ws, targetUrl: 'https://h.example.com/trx', events: [], source: 'api' },
      9000,
    );
    const fresh = await hooks.list(ws, null);
    assert.deepEqual(
      fresh.views.map((h) => h.target_url),
      ['https://h.example.com/trx'],
    );
    assert.equal(hooks.cachedList(ws, db.probe!.version()), undefined, 'a read without a reading is not cached');
  });

  test('cached views equal freshly built ones; never a secret, which only creation returns', async () => {
    const rows = await listHooks(db.kysely, ws);
    const cached = await hooks.list(ws);
    assert.deepEqual(cached.views, rows.map(presentHook));
    assert.ok(
      cached.views.every((h) => !('secret' in h)),
      "cached.views.every((h) => !('secret' in h))",
    );
    assert.equal(presentCreatedHook(rows[0]!).secret, rows[0]!.secret);
  });
});

describe('GET /v1/hooks sees hooks written elsewhere on the next request', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('a hook deleted by a second connection disappears, one created through the API appears', async () => {
    const t = await h.tenant();
    const created = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://example.com/a', events: [] },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(
      (await h.request('GET', '/v1/hooks', { token: t.token })).json.map((x: { id: string }) => x.id),
      [created.json.id],
    );
    const other = new Database(h.config.databaseUrl.slice('sqlite:'.length));
    try {
      other.prepare('update hooks set deleted_at = 1 where id = ?').run(created.json.id);
    } finally {
      other.close();
    }
    assert.deepEqual((await h.request('GET', '/v1/hooks', { token: t.token })).json, []);
    const again = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://example.com/b', events: [] },
    });
    assert.deepEqual(
      (await h.request('GET', '/v1/hooks', { token: t.token })).json.map((x: { id: string }) => x.id),
      [again.json.id],
    );
  });
});
