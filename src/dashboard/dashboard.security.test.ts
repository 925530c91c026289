// The dashboard's guards over HTTP, on SQLite and PostgreSQL, against the real app on a real port: sign-in is
// required everywhere; members look but cannot manage keys or webhooks; another workspace's key, hook or delivery is
// not found however its id is typed; a form without its CSRF token is refused; a created key's plaintext is in
// exactly one response. Sign-in, sessions and invitations: dashboard.sessions.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { dashboardClient, signedIn } from './testing/client.js';

const databases = await bothDatabases();

const PAGES = [
  '/dashboard/overview',
  '/dashboard/developers/keys',
  '/dashboard/developers/keys/key_x',
  '/dashboard/developers/keys/key_x/revoke',
];

for (const d of databases) {
  describe(`dashboard guards (${d.name})`, { skip: d.skip }, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ database: d.database });
    });
    after(() => h?.close());

    test('every page without a session redirects to sign-in; posts too', async () => {
      const c = dashboardClient(h);
      for (const p of PAGES) {
        const r = await c.get(p);
        assert.equal(r.status, 303, p);
        assert.equal(r.headers.location, `/dashboard/sign-in?next=${encodeURIComponent(p)}`, p);
      }
      await c.get('/dashboard/sign-in');
      const post = await c.post('/dashboard/developers/keys');
      assert.equal(post.status, 303);
      assert.equal(post.headers.location, '/dashboard/sign-in');
      const signin = await c.get('/dashboard/sign-in');
      assert.equal(signin.status, 200);
      assert.match(signin.headers['content-security-policy']!, /script-src 'self'(;|$)/);
      assert.doesNotMatch(signin.headers['content-security-policy']!, /unsafe-inline/);
      assert.equal(signin.headers['x-frame-options'], 'SAMEORIGIN');
      assert.match(signin.headers['content-security-policy']!, /frame-ancestors 'none'/);
      assert.equal(signin.headers['cache-control'], 'no-store');
    });

    test('a form post without its CSRF token is refused, and nothing changes', async () => {
      const ws = await h.workspace('business');
      const { client } = await signedIn(h, ws.id);
      await client.get('/dashboard/developers/keys');
      const forged = await client.post('/dashboard/developers/keys', {}, { csrf: null });
      assert.equal(forged.status, 403);
      const wrong = await client.post('/dashboard/developers/keys', {}, { csrf: 'x'.repeat(52) });
      assert.equal(wrong.status, 403);
      const keys = await h.db.kysely.selectFrom('api_keys').select('id').where('workspace_id', '=', ws.id).execute();
      assert.equal(keys.length, 0);
    });

    test('the plaintext key is in exactly one response; members cannot manage; other workspaces are not found', async () => {
      const ws = await h.workspace('business');
      const { client: owner } = await signedIn(h, ws.id, 'owner');
      await owner.get('/dashboard/developers/keys');
      const created = await owner.post('/dashboard/developers/keys');
      assert.equal(created.status, 201);
      const plaintext = /value="(svk_live_[0-9a-f]{32})"/.exec(created.text)?.[1];
      assert.ok(plaintext, 'the key is shown');
      const me = await h.request('GET', '/v1/me', { token: plaintext });
      assert.equal(me.status, 200, 'and it works');
      const keyId = /\/dashboard\/developers\/keys\/(key_[0-9a-f]+)/.exec(created.text)![1]!;
      for (const p of ['/dashboard/developers/keys', `/dashboard/developers/keys/${keyId}`, '/dashboard/overview'])
        assert.ok(!(await owner.get(p)).text.includes(plaintext), `${p} does not show the plaintext`);

      const { client: member } = await signedIn(h, ws.id, 'member');
      const list = await member.get('/dashboard/developers/keys');
      assert.equal(list.status, 200, 'members see the list');
      assert.doesNotMatch(list.text, /Create API key/);
      assert.equal((await member.post('/dashboard/developers/keys')).status, 403);
      await member.get(`/dashboard/developers/keys/${keyId}`);
      assert.equal((await member.post(`/dashboard/developers/keys/${keyId}/revoke`)).status, 403);
      assert.equal((await member.post(`/dashboard/developers/keys/${keyId}/ips`, { ips: '10.0.0.1' })).status, 403);

      const other = await h.workspace('business', 'Elsewhere');
      const { client: stranger } = await signedIn(h, other.id, 'owner');
      for (const p of [`/dashboard/developers/keys/${keyId}`, `/dashboard/developers/keys/${keyId}/revoke`])
        assert.equal((await stranger.get(p)).status, 404, p);
      await stranger.get('/dashboard/developers/keys');
      assert.equal((await stranger.post(`/dashboard/developers/keys/${keyId}/revoke`)).status, 404);
      assert.equal((await stranger.post(`/dashboard/developers/keys/${keyId}/ips`, { ips: '10.0.0.1' })).status, 404);
      assert.equal((await h.request('GET', '/v1/me', { token: plaintext })).status, 200, 'nobody else revoked it');
    });

    test(
      'allowlist and origins editors: the CLI’s canonical form and refusals; revoke → 401',
      { timeout: 20_000 },
      async () => {
        const ws = await h.workspace('business');
        const { client } = await signedIn(h, ws.id);
        await client.get('/dashboard/developers/keys');
        const created = await client.post('/dashboard/developers/keys');
        const plaintext = /value="(svk_live_[0-9a-f]{32})"/.exec(created.text)![1]!;
        const keyId = /\/dashboard\/developers\/keys\/(key_[0-9a-f]+)/.exec(created.text)![1]!;
        const page = `/dashboard/developers/keys/${keyId}`;
        await client.get(page);
        const bad = await client.post(`${page}/ips`, { ips: '10.0.0.0/8\nnot-an-ip' });
        assert.equal(bad.status, 400);
        assert.match(
          bad.text,
          /refused entry &#34;not-an-ip&#34;|refused entry &quot;not-an-ip&quot;|refused entry "not-an-ip"/,
        );
        assert.match(bad.text, /nothing saved/);
        const saved = await client.post(`${page}/ips`, { ips: ' 10.1.2.3 \n\n192.168.0.0/16\n10.1.2.3' });
        assert.equal(saved.status, 303);
        const row = await h.db.kysely
          .selectFrom('api_keys')
          .selectAll()
          .where('id', '=', keyId)
          .executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(row.allowed_ips), ['10.1.2.3', '192.168.0.0/16']);
        const refused = await h.request('GET', '/v1/me', { token: plaintext });
        assert.equal(refused.status, 403);
        assert.equal(refused.json.code, 'ip_not_allowed');
        await client.get(page);
        assert.equal((await client.post(`${page}/ips`, { ips: '' })).status, 303);
        assert.equal((await h.request('GET', '/v1/me', { token: plaintext })).status, 200);
        // The key-use audit: one row per /v1 request with the key, newest first, masked address, route pattern.
        await h.request('GET', '/v1/hooks/hook_missing/deliveries', { token: plaintext });
        await h.app.flushKeyUses();
        const uses = await client.get(page);
        const rows = [
          ...uses.text.matchAll(
            /<td><code>([^<]*)<\/code><\/td><td><code>([A-Z]+ [^<]*)<\/code><\/td><td>(\d+)<\/td>/g,
          ),
        ].map((m) => `${m[2]} ${m[3]} ${m[1]}`);
        assert.deepEqual(rows, [
          'GET /v1/hooks/:id/deliveries 404 127.0.0.x',
          'GET /v1/me 200 127.0.0.x',
          'GET /v1/me 403 127.0.0.x',
        ]);

        await client.get(page);
        const badOrigin = await client.post(`${page}/origins`, { origins: 'http://app.example' });
        assert.equal(badOrigin.status, 400);
        assert.match(badOrigin.text, /must be https; nothing saved/);
        assert.equal((await client.post(`${page}/origins`, { origins: 'https://App.Example:443/' })).status, 303);
        const withOrigins = await h.db.kysely
          .selectFrom('api_keys')
          .selectAll()
          .where('id', '=', keyId)
          .executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(withOrigins.allowed_origins), ['https://app.example']);

        await client.get(`${page}/revoke`);
        assert.equal((await client.post(`${page}/revoke`)).status, 303);
        assert.equal((await h.request('GET', '/v1/me', { token: plaintext })).status, 401);
        const after = await client.get(page);
        assert.match(after.text, /Revoked by [^ ]+@example\.com/);
        const audit = await h.db.kysely
          .selectFrom('audit_log')
          .select(['action', 'actor'])
          .where('target_id', '=', keyId)
          .execute();
        assert.deepEqual(audit.map((a) => a.action).sort(), [
          'key.created',
          'key.ips_set',
          'key.ips_set',
          'key.origins_set',
          'key.revoked',
        ]);
        assert.ok(
          audit.every((a) => a.actor.startsWith('user:')),
          JSON.stringify(audit),
        );
        const log = await client.get('/dashboard/audit-log');
        assert.equal(log.status, 200);
        assert.match(log.text, /key\.revoked/);
        const other = await h.workspace('business', 'Other log');
        const { client: stranger } = await signedIn(h, other.id);
        const theirs = await stranger.get('/dashboard/audit-log');
        assert.ok(!theirs.text.includes(keyId), 'another workspace’s audit log does not show this key');
      },
    );

    test('webhooks: members cannot manage; another workspace’s hook and delivery are not found', async () => {
      const ws = await h.workspace('business', 'Hooks here');
      const { client: owner } = await signedIn(h, ws.id, 'owner');
      await owner.get('/dashboard/developers/webhooks');
      const made = await owner.post('/dashboard/developers/webhooks', { target_url: 'http://127.0.0.1:9/hook' });
      assert.equal(made.status, 201);
      const hookId = /\/dashboard\/developers\/webhooks\/(hook_[0-9a-f]+)/.exec(made.text)![1]!;
      await owner.get(`/dashboard/developers/webhooks/${hookId}`);
      assert.equal((await owner.post(`/dashboard/developers/webhooks/${hookId}/test`)).status, 303);
      const delivery = await h.db.kysely
        .selectFrom('deliveries')
        .select('id')
        .where('hook_id', '=', hookId)
        .executeTakeFirstOrThrow();
      const hookPage = `/dashboard/developers/webhooks/${hookId}`;
      const replay = `${hookPage}/deliveries/${delivery.id}/replay`;

      const { client: member } = await signedIn(h, ws.id, 'member');
      const seen = await member.get(hookPage);
      assert.equal(seen.status, 200, 'members see the history');
      assert.doesNotMatch(seen.text, /Send test event|Replay/);
      assert.equal(
        (await member.post('/dashboard/developers/webhooks', { target_url: 'http://127.0.0.1:9/x' })).status,
        403,
      );
      assert.equal((await member.post(`${hookPage}/test`)).status, 403);
      assert.equal((await member.post(replay)).status, 403);
      assert.equal((await member.post(`${hookPage}/delete`)).status, 403);

      const other = await h.workspace('business', 'Hooks elsewhere');
      const { client: stranger } = await signedIn(h, other.id, 'owner');
      for (const p of [hookPage, `${hookPage}/delete`]) assert.equal((await stranger.get(p)).status, 404, p);
      await stranger.get('/dashboard/developers/webhooks');
      for (const p of [`${hookPage}/test`, replay, `${hookPage}/delete`])
        assert.equal((await stranger.post(p)).status, 404, p);
      const rows = await h.db.kysely.selectFrom('deliveries').select('id').where('hook_id', '=', hookId).execute();
      assert.equal(rows.length, 1, 'no test or replay was queued by anyone but the owner');
      const hook = await h.db.kysely
        .selectFrom('hooks')
        .select('deleted_at')
        .where('id', '=', hookId)
        .executeTakeFirstOrThrow();
      assert.equal(hook.deleted_at, null, 'and nobody else deleted it');
    });
  });
}
