// The dashboard's guards over HTTP, on SQLite and PostgreSQL, against the real app on a real port: sign-in is
// required everywhere; members look but cannot manage keys; another workspace's key is not found however its id is
// typed; a form without its CSRF token is refused; a created key's plaintext is in exactly one response; sign-in
// throttling holds under 100 bad passwords with one generic answer; links work once; sessions end.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { createUserLink } from './people.service.js';
import { dashboardClient, PASSWORD, signedIn } from './testing/client.js';

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

    test('the first owner: link → password → sign-in; the link works once; a short password is refused', async () => {
      const ws = await h.workspace('business', 'Owners Inc');
      const link = await createUserLink(h, {
        email: 'First.Owner@Example.com',
        workspaceId: ws.id,
        role: 'owner',
        by: 'test',
      });
      const path = new URL(link.url).pathname;
      const c = dashboardClient(h);
      const page = await c.get(path);
      assert.equal(page.status, 200);
      assert.match(page.text, /first\.owner@example\.com/);
      const short = await c.post(path, { password: 'too short', confirm: 'too short' });
      assert.equal(short.status, 400);
      assert.match(short.text, /at least 12 characters/);
      const set = await c.post(path, { password: PASSWORD, confirm: PASSWORD });
      assert.equal(set.status, 303);
      const again = await c.get(path);
      assert.equal(again.status, 410, 'a used link is gone');
      const row = await h.db.kysely
        .selectFrom('users')
        .selectAll()
        .where('email', '=', 'first.owner@example.com')
        .executeTakeFirstOrThrow();
      assert.match(row.password_hash!, /^scrypt\$32768\$8\$1\$/);
      assert.ok(!row.password_hash!.includes(PASSWORD), 'the password is not stored');

      await c.get('/dashboard/sign-in');
      const wrong = await c.post('/dashboard/sign-in', {
        email: 'first.owner@example.com',
        password: 'not the password',
      });
      assert.equal(wrong.status, 401);
      const ok = await c.post('/dashboard/sign-in', { email: 'FIRST.owner@example.com', password: PASSWORD });
      assert.equal(ok.status, 303);
      assert.equal(ok.headers.location, '/dashboard/overview');
      assert.match(
        String(ok.headers['set-cookie']),
        /signet_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Lax/,
      );
      const overview = await c.get('/dashboard/overview');
      assert.equal(overview.status, 200);
      assert.match(overview.text, /Owners Inc/);

      // Links expire after 72 hours.
      const late = await createUserLink(h, {
        email: 'late@example.com',
        workspaceId: ws.id,
        role: 'member',
        by: 'test',
      });
      h.clock.advance(72 * 3600_000);
      assert.equal((await dashboardClient(h).get(new URL(late.url).pathname)).status, 410);
    });

    test('sessions end after 12 idle hours and on sign-out', async () => {
      const ws = await h.workspace('business');
      const { client } = await signedIn(h, ws.id);
      assert.equal((await client.get('/dashboard/overview')).status, 200);
      h.clock.advance(11 * 3600_000);
      assert.equal((await client.get('/dashboard/overview')).status, 200, 'used within 12 h');
      h.clock.advance(12 * 3600_000 + 1000);
      assert.equal((await client.get('/dashboard/overview')).status, 303, 'idle for 12 h');

      // A password change signs the person out everywhere: a second browser too.
      const { client: first, email } = await signedIn(h, ws.id, 'admin');
      const second = dashboardClient(h);
      await second.get('/dashboard/sign-in');
      assert.equal((await second.post('/dashboard/sign-in', { email, password: PASSWORD })).status, 303);
      assert.equal((await second.get('/dashboard/overview')).status, 200);
      await first.get('/dashboard/account');
      const wrong = await first.post('/dashboard/account/password', {
        current: 'nope',
        password: 'a brand new passphrase',
        confirm: 'a brand new passphrase',
      });
      assert.equal(wrong.status, 400);
      assert.match(wrong.text, /current password is not right/);
      const changed = await first.post('/dashboard/account/password', {
        current: PASSWORD,
        password: 'a brand new passphrase',
        confirm: 'a brand new passphrase',
      });
      assert.equal(changed.status, 303);
      assert.equal((await first.get('/dashboard/overview')).status, 303, 'this browser is signed out');
      assert.equal((await second.get('/dashboard/overview')).status, 303, 'and the other one');
      await second.get('/dashboard/sign-in');
      assert.equal(
        (await second.post('/dashboard/sign-in', { email, password: PASSWORD })).status,
        401,
        'the old password is gone',
      );
      assert.equal(
        (await second.post('/dashboard/sign-in', { email, password: 'a brand new passphrase' })).status,
        303,
      );

      const again = await signedIn(h, ws.id, 'admin');
      await again.client.get('/dashboard/overview');
      const out = await again.client.post('/dashboard/sign-out');
      assert.equal(out.status, 303);
      assert.equal((await again.client.get('/dashboard/overview')).status, 303);
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

    test('owners invite by e-mail through the mail outbox; the link works once; admins and members cannot invite', async () => {
      const ws = await h.workspace('business', 'Invites');
      const { client: owner, email: ownerEmail } = await signedIn(h, ws.id, 'owner');
      await owner.get('/dashboard/people');
      const sent = await owner.post('/dashboard/people', { email: 'New.Person@Example.com', role: 'admin' });
      assert.equal(sent.status, 303);
      const mail = await h.db.kysely
        .selectFrom('mail_outbox')
        .selectAll()
        .where('to_email', '=', 'new.person@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(mail.template, 'member_invitation');
      assert.match(mail.text, new RegExp(ownerEmail.replace('.', '\\.')));
      const link = /\/dashboard\/set-password\/[A-Za-z0-9_-]{43}/.exec(mail.text)![0];
      await owner.get('/dashboard/people');
      const again = await owner.post('/dashboard/people', { email: 'new.person@example.com', role: 'member' });
      assert.equal(again.status, 400);
      assert.match(again.text, /already in this workspace/);
      const bad = await owner.post('/dashboard/people', { email: 'nobody', role: 'member' });
      assert.equal(bad.status, 400);
      // The API's rule (lib/email.ts): an address the mail outbox could not write into a header is refused up front.
      const unmailable = await owner.post('/dashboard/people', { email: 'a(b@example.com', role: 'member' });
      assert.equal(unmailable.status, 400);

      const invited = dashboardClient(h);
      await invited.get(link);
      assert.equal((await invited.post(link, { password: PASSWORD, confirm: PASSWORD })).status, 303);
      assert.equal((await invited.get(link)).status, 410, 'the invitation link works once');
      await invited.get('/dashboard/sign-in');
      assert.equal(
        (await invited.post('/dashboard/sign-in', { email: 'new.person@example.com', password: PASSWORD })).status,
        303,
      );
      const people = await invited.get('/dashboard/people');
      assert.match(people.text, /new\.person@example\.com<\/td><td>admin/);
      assert.doesNotMatch(people.text, /Send invitation/, 'an admin sees no invite form');
      assert.equal((await invited.post('/dashboard/people', { email: 'x@example.com', role: 'member' })).status, 403);
      const { client: member } = await signedIn(h, ws.id, 'member');
      await member.get('/dashboard/people');
      assert.equal((await member.post('/dashboard/people', { email: 'y@example.com', role: 'owner' })).status, 403);
      const invites = await h.db.kysely
        .selectFrom('mail_outbox')
        .select('to_email')
        .where('template', '=', 'member_invitation')
        .execute();
      assert.deepEqual(
        invites
          .map((r) => r.to_email)
          .filter((e) => e !== 'new.person@example.com')
          .filter((e) => /^[xy]@/.test(e)),
        [],
      );
    });

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

    test('sign-in throttling holds under 100 bad passwords, with one generic answer', async () => {
      const ws = await h.workspace('business');
      const { email } = await signedIn(h, ws.id);
      const c = dashboardClient(h, { localAddress: '127.0.0.9' });
      await c.get('/dashboard/sign-in');
      const bodies = new Set<string>();
      for (let i = 0; i < 100; i++) {
        const r = await c.post('/dashboard/sign-in', { email, password: `wrong password ${i}` });
        assert.equal(r.status, 401);
        bodies.add(/<p class="notice error" role="alert">([^<]*)<\/p>/.exec(r.text)![1]!);
      }
      // Locked now: the right password gets the very same answer, until the window has passed.
      const locked = await c.post('/dashboard/sign-in', { email, password: PASSWORD });
      assert.equal(locked.status, 401);
      bodies.add(/<p class="notice error" role="alert">([^<]*)<\/p>/.exec(locked.text)![1]!);
      assert.equal(bodies.size, 1, 'one message for wrong password and locked account');
      const other = dashboardClient(h, { localAddress: '127.0.0.10' });
      await other.get('/dashboard/sign-in');
      assert.equal((await other.post('/dashboard/sign-in', { email, password: PASSWORD })).status, 401, 'per account');
      h.clock.advance(61_000);
      assert.equal((await other.post('/dashboard/sign-in', { email, password: PASSWORD })).status, 303, 'window over');
    });
  });
}

describe('dashboard cookies behind https', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: { BASE_URL: 'https://signet.example' } });
  });
  after(() => h?.close());

  test('the session and CSRF cookies are Secure when BASE_URL is https', async () => {
    const ws = await h.workspace('business');
    const link = await createUserLink(h, { email: 'tls@example.com', workspaceId: ws.id, role: 'owner', by: 'test' });
    assert.match(link.url, /^https:\/\/signet\.example\/dashboard\/set-password\//);
    const c = dashboardClient(h);
    const path = new URL(link.url).pathname;
    const form = await c.get(path);
    assert.match(
      String(form.headers['set-cookie']),
      /signet_csrf=[^;]+; Path=\/dashboard; HttpOnly; Secure; SameSite=Strict/,
    );
    assert.match(String(form.headers['strict-transport-security']), /max-age=\d+/);
    await c.post(path, { password: PASSWORD, confirm: PASSWORD });
    await c.get('/dashboard/sign-in');
    const r = await c.post('/dashboard/sign-in', { email: 'tls@example.com', password: PASSWORD });
    assert.equal(r.status, 303);
    assert.match(
      String(r.headers['set-cookie']),
      /signet_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; Secure; SameSite=Lax/,
    );
  });
});
