import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { revokeKey } from '../keys/keys.repo.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { LISTENER_NAME, STALE_AFTER_MS } from './pg-change-probe.js';

const pgCheck = await postgresForTests();
const skip = 'skip' in pgCheck ? pgCheck.skip : false;

/** Polls `f` every 5 ms until it is true; the time it took, or throws after `limitMs`. */
async function within(limitMs: number, what: string, f: () => Promise<boolean> | boolean): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await f()) return performance.now() - t0;
    if (performance.now() - t0 > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(5);
  }
}

describe('PostgreSQL change probe: caches follow other processes within a bound', { skip }, () => {
  let h: Harness;
  let other: pg.Client; // stands for another instance or the CLI: its own connection, nothing shared
  const version = () => h.db.probe!.version();
  before(async () => {
    h = await startHarness({ database: { postgresAdminUrl: (pgCheck as { url: string }).url } });
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(h.db.kysely);
    const url = new URL((pgCheck as { url: string }).url);
    url.pathname = `/${rows[0]!.name}`;
    other = new pg.Client(url.toString());
    await other.connect();
    await within(2000, 'the probe goes live', () => version() !== null);
  });
  after(async () => {
    await other.end();
    await h.close();
  });

  test('reads and unrelated writes leave the version alone; watched writes move it, here and from elsewhere', async () => {
    const t = await h.tenant();
    await h.request('GET', '/v1/hooks', { token: t.token });
    await sleep(50);
    const v0 = version();
    assert.ok(v0 !== null, 'live');
    for (let i = 0; i < 5; i++) assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
    await other.query('update api_keys set last_used_at = $1 where id = $2', [Date.now(), t.keyId]);
    await other.query("select pg_notify('unrelated', 'x')");
    await sleep(100);
    assert.equal(version(), v0, 'GETs, last-used bookkeeping and other channels move nothing');
    await h.db.kysely.updateTable('hooks').set({ deleted_at: 1 }).where('id', '=', 'none').execute();
    const v1 = version();
    assert.ok(v1 !== v0, 'a local write to a watched table moves the version before its caller resumes');
    await other.query('update workspaces set name = name where id = $1', [t.workspaceId]);
    await within(1000, 'a notice from another connection', () => version() !== v1);
  });

  test('a key revoked by another process is refused within 1 s; by this process, on the very next request', async (ctx) => {
    for (let i = 0; i < 5; i++) {
      const t = await h.tenant();
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
      await other.query('update api_keys set revoked_at = $1 where id = $2', [Date.now(), t.keyId]);
      const ms = await within(1000, 'revocation seen', async () => {
        return (await h.request('GET', '/v1/hooks', { token: t.token })).status === 401;
      });
      assert.ok(ms <= STALE_AFTER_MS, `seen after ${ms.toFixed(1)} ms`);
      ctx.diagnostic(`revoked elsewhere, refused after ${ms.toFixed(1)} ms`);
    }
    for (let i = 0; i < 20; i++) {
      const t = await h.tenant();
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
      assert.ok(await revokeKey(h.db.kysely, t.keyId, 'test', Date.now()), 'revoked');
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 401, `round ${i}`);
    }
  });

  test('a hook created by another process is listed within 1 s', async () => {
    const t = await h.tenant();
    const list = async () => (await h.request('GET', '/v1/hooks', { token: t.token })).json.length as number;
    assert.equal(await list(), 0);
    const created = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://hooks.example.com/in', events: ['document.completed'] },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(await list(), 1, 'created here: listed at once');
    await other.query('update hooks set deleted_at = $1 where id = $2', [Date.now(), created.json.id]);
    await within(1000, 'deleted elsewhere', async () => (await list()) === 0);
  });

  test('work committed elsewhere is announced by table at commit, without moving the cache version', async () => {
    const t = await h.tenant();
    const seen: string[] = [];
    const unwatch = h.db.watchWork((table) => seen.push(table!));
    try {
      await sleep(100); // the tenant's own change notices arrive first
      const v0 = version();
      await other.query('begin');
      await other.query(
        `insert into mail_outbox (id, workspace_id, template, locale, to_email, to_name, from_name, subject, text, html,
           status, created_at, updated_at)
         values ('mail_probe', $1, 'invite', 'en', 'ana@example.com', 'Ana', 'Signet', 's', 'b', '<p>b</p>', 'sent', $2, $2)`,
        [t.workspaceId, Date.now()],
      );
      await sleep(100);
      assert.deepEqual(seen, [], 'nothing before the commit');
      await other.query('commit');
      await within(1000, 'the work notice', () => seen.length > 0);
      assert.deepEqual(seen, ['mail_outbox']);
      assert.equal(version(), v0, 'work notices leave the caches alone');
    } finally {
      unwatch();
    }
  });

  test('when the notice connection is lost nothing is served from memory until it is back', async () => {
    const t = await h.tenant();
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
    await other.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [
      LISTENER_NAME,
    ]);
    await within(500, 'caching off', () => version() === null);
    // With the probe off, a change from elsewhere is seen by the next request (read from the database).
    await other.query('update api_keys set revoked_at = $1 where id = $2', [Date.now(), t.keyId]);
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 401);
    const back = await within(3000, 'caching back', () => version() !== null);
    assert.ok(back < 3000, `back after ${back.toFixed(0)} ms`);
  });
});

test('a schema without the notice triggers (before signet migrate) is never cached', { skip }, async () => {
  const fresh = await freshPostgres((pgCheck as { url: string }).url, '007-dashboard');
  try {
    await sleep(600);
    assert.equal(fresh.db.probe!.version(), null, 'no triggers: no caching');
  } finally {
    await fresh.drop();
  }
});
