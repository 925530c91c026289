import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startHarness, type Harness } from '../testing/harness.js';
import { postgresForTests } from '../testing/services.js';
import { revokeKey, setAllowedIps, setRateLimit, findKey } from '../keys/keys.repo.js';

const RL_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'];
const noRateHeaders = (h: Record<string, string>) => RL_HEADERS.every((n) => !(n in h));

describe('authentication', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('missing, malformed, wrong-prefix and unknown keys are 401 invalid_key with the exact body', async () => {
    const ws = await h.workspace();
    const good = await h.key(ws.id);
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: '' },
      { authorization: 'Bearer' },
      { authorization: `Basic ${good.plaintext}` },
      { authorization: `Bearer sk_live_${'a'.repeat(32)}` },
      { authorization: `Bearer svk_test_${'a'.repeat(32)}` },
      { authorization: `Bearer svk_live_${'a'.repeat(31)}` },
      { authorization: `Bearer svk_live_${'A'.repeat(32)}` },
      { authorization: `Bearer svk_live_${'a'.repeat(32)}` },
      { authorization: `Bearer lgk_live_${'b'.repeat(32)}` },
      { authorization: `Bearer ${good.plaintext}x` },
    ];
    for (const headers of cases) {
      for (const path of ['/v1/me', '/v1/hooks', '/v1/does-not-exist']) {
        const r = await h.request('GET', path, { headers });
        assert.equal(r.status, 401, `${JSON.stringify(headers)} ${path}`);
        assert.equal(r.json.code, 'invalid_key');
        assert.equal(typeof r.json.error, 'string');
        assert.deepEqual(Object.keys(r.json).sort(), ['code', 'error']);
        assert.ok(noRateHeaders(r.headers), 'noRateHeaders(r.headers)');
      }
    }
  });

  test('GET /v1/me returns the workspace for current and legacy keys alike', async () => {
    const ws = await h.workspace('business', 'Acme Ünïcode');
    const cur = await h.key(ws.id);
    const legacy = await h.key(ws.id, { legacy: true });
    assert.match(cur.plaintext, /^svk_live_[0-9a-f]{32}$/);
    assert.match(legacy.plaintext, /^lgk_live_[0-9a-f]{32}$/);
    for (const k of [cur, legacy]) {
      const r = await h.request('GET', '/v1/me', { token: k.plaintext });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, { id: ws.id, name: 'Acme Ünïcode', slug: ws.slug, tier: 'business' });
      assert.ok(noRateHeaders(r.headers), '/v1/me carries no RateLimit headers');
    }
    const k = await findKey(h.db.kysely, legacy.id);
    assert.equal(k!.label, legacy.plaintext.slice(0, 12));
    assert.notEqual(k!.key_hash, legacy.plaintext);
    assert.ok(!JSON.stringify(k).includes(legacy.plaintext.slice(12)), 'the secret part is not stored');
  });

  test('revocation takes effect on the very next request, and is recorded with who and when', async () => {
    const t = await h.tenant();
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
    assert.equal(await revokeKey(h.db.kysely, t.keyId, 'cli:alice', h.clock.now()), true);
    const r = await h.request('GET', '/v1/hooks', { token: t.token });
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'invalid_key');
    assert.equal((await h.request('GET', '/v1/me', { token: t.token })).status, 401);
    const k = await findKey(h.db.kysely, t.keyId);
    assert.equal(k!.revoked_by, 'cli:alice');
    assert.equal(k!.revoked_at, h.clock.now());
    // A second key of the same workspace keeps working (rotation).
    const other = await h.key(t.workspaceId);
    assert.equal((await h.request('GET', '/v1/hooks', { token: other.plaintext })).status, 200);
  });

  test('a tier without API access is 402 tier_required with meta.tier, before the rate limit', async () => {
    const t = await h.tenant('free');
    const r = await h.request('GET', '/v1/hooks', { token: t.token });
    assert.equal(r.status, 402);
    assert.deepEqual(r.json, { error: r.json.error, code: 'tier_required', meta: { tier: 'free' } });
    assert.ok(noRateHeaders(r.headers), 'noRateHeaders(r.headers)');
  });

  test('IPv4 allowlist: exact address and CIDR, matched on the socket peer only', async () => {
    const t = await h.tenant();
    await setAllowedIps(h.db.kysely, t.keyId, ['127.0.0.2', '127.0.0.8/30']);
    const from = (localAddress: string, headers: Record<string, string> = {}) =>
      h.request('GET', '/v1/hooks', { token: t.token, localAddress, headers });
    assert.equal((await from('127.0.0.2')).status, 200);
    assert.equal((await from('127.0.0.9')).status, 200);
    assert.equal((await from('127.0.0.11')).status, 200);
    const out = await from('127.0.0.3');
    assert.equal(out.status, 403);
    assert.deepEqual(out.json, { error: out.json.error, code: 'ip_not_allowed', ip: '127.0.0.3' });
    assert.ok(noRateHeaders(out.headers), 'noRateHeaders(out.headers)');
    assert.equal((await from('127.0.0.12')).status, 403);
    // Headers claiming an allowed address change nothing.
    const spoof = await from('127.0.0.3', {
      'x-forwarded-for': '127.0.0.2',
      'x-real-ip': '127.0.0.2',
      forwarded: 'for=127.0.0.2',
    });
    assert.equal(spoof.status, 403);
    assert.equal(spoof.json.ip, '127.0.0.3');
    // An IPv6-only list refuses every IPv4 caller.
    await setAllowedIps(h.db.kysely, t.keyId, ['::1']);
    assert.equal((await from('127.0.0.2')).status, 403);
    await setAllowedIps(h.db.kysely, t.keyId, ['127.0.0.2']);
    // /v1/me is gated too.
    assert.equal((await h.request('GET', '/v1/me', { token: t.token, localAddress: '127.0.0.3' })).status, 403);
  });

  test('one keep-alive connection switching keys: each request is judged by its own Authorization header', async () => {
    const a = await h.tenant();
    const b = await h.tenant('business');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const get = (p: string, authorization?: string) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = http.get(
          h.url(p),
          { agent, headers: authorization === undefined ? {} : { authorization } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          },
        );
        req.on('socket', (s) => sockets.add(s));
        req.on('error', reject);
      });
    try {
      const me = async (authorization?: string) => get('/v1/me', authorization);
      assert.equal((await me(`Bearer ${a.token}`)).body.id, a.workspaceId);
      assert.equal((await me(`Bearer ${b.token}`)).body.id, b.workspaceId);
      assert.equal((await me(`Bearer ${a.token}`)).body.id, a.workspaceId);
      assert.equal((await me(`bearer  ${a.token} `)).body.id, a.workspaceId, 'another spelling of the same key');
      for (const bad of [undefined, '', `Bearer ${a.token}0`, `Basic ${a.token}`]) {
        const r = await me(bad);
        assert.equal(r.status, 401, String(bad));
        assert.equal(r.body.code, 'invalid_key');
      }
      assert.equal((await me(`Bearer ${a.token}`)).status, 200);
      await revokeKey(h.db.kysely, a.keyId, 'test', h.clock.now());
      assert.equal((await get('/v1/hooks', `Bearer ${a.token}`)).status, 401);
      assert.equal((await get('/v1/hooks', `Bearer ${b.token}`)).status, 200);
      assert.equal(sockets.size, 1, 'every request went over the same connection');
    } finally {
      agent.destroy();
    }
  });

  test('last-used time and the masked caller address are recorded per key', async () => {
    const t = await h.tenant();
    h.clock.advance(1234);
    await h.request('GET', '/v1/me', { token: t.token, localAddress: '127.0.0.5' });
    const before = await findKey(h.db.kysely, t.keyId);
    assert.equal(before!.last_used_at, null, 'written in batches, not on the request path');
    await h.app.flushLastUsed();
    const k = await findKey(h.db.kysely, t.keyId);
    assert.equal(k!.last_used_at, h.clock.now());
    assert.equal(k!.last_used_ip, '127.0.0.x');
  });
});

describe('IPv6 callers', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ listenHost: '::1' });
  });
  after(() => h.close());

  test('IPv6 allowlist with ::1, and keys of one workspace have independent lists', async () => {
    const t = await h.tenant();
    const second = await h.key(t.workspaceId);
    await setAllowedIps(h.db.kysely, t.keyId, ['::1']);
    const v6 = await h.request('GET', '/v1/hooks', { token: t.token, host: '::1' });
    assert.equal(v6.status, 200);
    await setAllowedIps(h.db.kysely, t.keyId, ['::/127']);
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token, host: '::1' })).status, 200);
    await setAllowedIps(h.db.kysely, t.keyId, ['2001:db8::/32']);
    const refused = await h.request('GET', '/v1/hooks', { token: t.token, host: '::1' });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.ip, '::1');
    // The other key of the same workspace has an empty list: unrestricted.
    assert.equal((await h.request('GET', '/v1/hooks', { token: second.plaintext, host: '::1' })).status, 200);
  });
});

describe('IPv4-mapped callers', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ listenHost: '::ffff:127.0.0.1' });
  });
  after(() => h.close());

  test('an IPv4-mapped IPv6 peer matches plain IPv4 entries and blocks', async () => {
    const t = await h.tenant();
    await setAllowedIps(h.db.kysely, t.keyId, ['127.0.0.3']);
    const ok = await h.request('GET', '/v1/hooks', { token: t.token, localAddress: '127.0.0.3' });
    assert.equal(ok.status, 200);
    await setAllowedIps(h.db.kysely, t.keyId, ['127.0.0.0/29']);
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token, localAddress: '127.0.0.6' })).status, 200);
    const out = await h.request('GET', '/v1/hooks', { token: t.token, localAddress: '127.0.0.9' });
    assert.equal(out.status, 403);
    assert.equal(out.json.ip, '127.0.0.9');
  });
});

describe('caller address unknown', () => {
  test('a non-empty allowlist refuses a caller whose address cannot be determined, with ip: null', async () => {
    // A Unix-socket listener is a real connection whose peer has no IP address.
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const { Agent, request } = await import('undici');
    const h = await startHarness();
    const sock = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signet-sock-')), 'api.sock');
    const { createRuntime } = await import('../runtime.js');
    const { createMemoryLimiter } = await import('../ratelimit/ratelimit.js');
    const rt = await createRuntime(h.config, {
      api: true,
      worker: false,
      db: h.db,
      clock: h.clock,
      limiter: createMemoryLimiter({ clock: h.clock }),
      logger: false,
      keyring: null,
    });
    const app = rt.app!;
    await app.listen({ path: sock });
    const agent = new Agent({ connect: { socketPath: sock } });
    try {
      const restricted = await h.tenant();
      const open = await h.tenant();
      await setAllowedIps(h.db.kysely, restricted.keyId, ['127.0.0.1']);
      const call = async (token: string) => {
        const r = await request('http://localhost/v1/hooks', {
          headers: { authorization: `Bearer ${token}` },
          dispatcher: agent,
        });
        return { status: r.statusCode, json: (await r.body.json()) as Record<string, unknown> };
      };
      const refused = await call(restricted.token);
      assert.equal(refused.status, 403);
      assert.equal(refused.json.code, 'ip_not_allowed');
      assert.ok('ip' in refused.json, "'ip' in refused.json");
      assert.equal(refused.json.ip, null);
      assert.equal((await call(open.token)).status, 200, 'an empty list is unaffected');
    } finally {
      await agent.close();
      await rt.close();
      await h.close();
    }
  });
});

// Auth rows are cached in-process on SQLite (keys/auth-cache.ts). These check that the cache never outlives a change,
// whoever makes it: a second connection, another process, or a write on the app's own connection outside keys.repo.
describe('auth cache: changes from elsewhere apply on the next request', () => {
  let h: Harness;
  let file: string;
  before(async () => {
    h = await startHarness();
    file = h.config.databaseUrl.slice('sqlite:'.length);
  });
  after(() => h.close());

  /** Runs SQL on a second better-sqlite3 connection to the app's database file. */
  const onSecondConnection = (sql: string, ...params: unknown[]) => {
    const other = new Database(file);
    try {
      other.pragma('busy_timeout = 5000');
      other.prepare(sql).run(...params);
    } finally {
      other.close();
    }
  };

  /** Runs SQL in a separate Node process, as the CLI or another instance would. */
  const inChildProcess = (sql: string, ...params: unknown[]) =>
    new Promise<void>((resolve, reject) => {
      const script =
        "const D = require('better-sqlite3'); const [file, sql, params] = process.argv.slice(1);" +
        "const d = new D(file); d.pragma('busy_timeout = 5000'); d.prepare(sql).run(...JSON.parse(params)); d.close();";
      const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
      execFile(
        process.execPath,
        ['-e', script, file, sql, JSON.stringify(params)],
        { cwd: root },
        (err, _out, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve()),
      );
    });

  const get = (token: string, p = '/v1/hooks') => h.request('GET', p, { token });

  test('a revoke by a second connection', async () => {
    const t = await h.tenant();
    for (let i = 0; i < 3; i++) assert.equal((await get(t.token)).status, 200);
    onSecondConnection(
      'update api_keys set revoked_at = ?, revoked_by = ? where id = ?',
      h.clock.now(),
      'other',
      t.keyId,
    );
    assert.equal((await get(t.token)).status, 401);
    assert.equal((await get(t.token, '/v1/me')).status, 401);
  });

  test('a revoke by another process', async () => {
    const t = await h.tenant();
    for (let i = 0; i < 3; i++) assert.equal((await get(t.token, '/v1/me')).status, 200);
    await inChildProcess(
      'update api_keys set revoked_at = ?, revoked_by = ? where id = ?',
      h.clock.now(),
      'cli:bob',
      t.keyId,
    );
    const r = await get(t.token, '/v1/me');
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'invalid_key');
  });

  test('set-ips by a second connection, and clearing it again', async () => {
    const t = await h.tenant();
    assert.equal((await get(t.token)).status, 200);
    onSecondConnection('update api_keys set allowed_ips = ? where id = ?', '["10.0.0.0/8"]', t.keyId);
    const refused = await get(t.token);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, 'ip_not_allowed');
    onSecondConnection("update api_keys set allowed_ips = '[]' where id = ?", t.keyId);
    assert.equal((await get(t.token)).status, 200);
  });

  test('a tier change and a rate limit by another process', async () => {
    const t = await h.tenant('business');
    assert.equal((await get(t.token)).headers['ratelimit-limit'], '60');
    await inChildProcess('update api_keys set rate_limit = 7 where id = ?', t.keyId);
    assert.equal((await get(t.token)).headers['ratelimit-limit'], '7');
    await inChildProcess("update workspaces set tier = 'free' where id = ?", t.workspaceId);
    assert.equal((await get(t.token)).status, 402);
    await inChildProcess("update workspaces set tier = 'business' where id = ?", t.workspaceId);
    assert.equal((await get(t.token, '/v1/me')).json.tier, 'business');
  });

  test("writes on the app's own connection: through keys.repo and around it", async () => {
    const t = await h.tenant();
    assert.equal((await get(t.token)).status, 200);
    await setRateLimit(h.db.kysely, t.keyId, 9);
    assert.equal((await get(t.token)).headers['ratelimit-limit'], '9');
    await h.db.kysely.updateTable('workspaces').set({ name: 'Renamed' }).where('id', '=', t.workspaceId).execute();
    assert.equal((await get(t.token, '/v1/me')).json.name, 'Renamed');
    await h.db.kysely
      .updateTable('api_keys')
      .set({ revoked_at: 1, revoked_by: 'raw' })
      .where('id', '=', t.keyId)
      .execute();
    assert.equal((await get(t.token)).status, 401);
  });

  test('last-used writes do not disturb authentication', async () => {
    const t = await h.tenant();
    assert.equal((await get(t.token)).status, 200);
    await h.app.flushLastUsed();
    assert.equal((await get(t.token)).status, 200);
    assert.notEqual((await findKey(h.db.kysely, t.keyId))!.last_used_at, null);
  });
});

const pg = await postgresForTests();
describe('revocation on PostgreSQL (no auth cache there)', { skip: 'skip' in pg ? pg.skip : false }, () => {
  test('a revoke written around keys.repo applies on the next request', async () => {
    const h = await startHarness({ database: { postgresAdminUrl: 'url' in pg ? pg.url : '' } });
    try {
      const t = await h.tenant();
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);
      // Any pooled connection, and no local invalidation: only a per-request lookup sees this.
      await h.db.kysely
        .updateTable('api_keys')
        .set({ revoked_at: h.clock.now(), revoked_by: 'other' })
        .where('id', '=', t.keyId)
        .execute();
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 401);
    } finally {
      await h.close();
    }
  });
});
