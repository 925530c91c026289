// The dashboard's people and sessions over HTTP, on SQLite and PostgreSQL, against the real app on a real port: the
// first owner's one-time link; sessions end after idle hours and on sign-out; owners invite by e-mail and links work
// once; sign-in throttling holds under 100 bad passwords with one generic answer (on the first database only: the
// limiter, not the database, throttles); cookies are Secure behind https.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { createUserLink } from './people.service.js';
import { dashboardClient, PASSWORD, signedIn } from './testing/client.js';

const databases = await bothDatabases();

for (const d of databases) {
  describe(`dashboard sign-in, sessions and invitations (${d.name})`, { skip: d.skip }, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ database: d.database });
    });
    after(() => h?.close());

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

    // Throttling is the rate limiter's, not the database's: one database's run covers it, and each run costs 100
    // scrypt hashes (about 20 s of CI time).
    const throttleSkip = d.name === databases[0]!.name ? false : 'covered by the first database: the limiter throttles';
    test(
      'sign-in throttling holds under 100 bad passwords, with one generic answer',
      { skip: throttleSkip },
      async () => {
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
        assert.equal(
          (await other.post('/dashboard/sign-in', { email, password: PASSWORD })).status,
          401,
          'per account',
        );
        h.clock.advance(61_000);
        assert.equal(
          (await other.post('/dashboard/sign-in', { email, password: PASSWORD })).status,
          303,
          'window over',
        );
      },
    );
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
