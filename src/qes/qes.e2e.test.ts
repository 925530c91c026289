// Qualified signatures end to end over HTTP, on SQLite and PostgreSQL, against the local CSC API v2 provider: two
// signers each pass the provider's login and consent twice (identify, then the one hash); the sealed PDF holds both
// signer signatures, Signet's seal and a document timestamp, judged by qpdf, pdfsig and openssl; the verification
// report calls the two signatures qualified. Then the security rules: state and PKCE single-use and bound to the
// link and browser, a replayed code refused, the hash authorized is the hash signed, no access token stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listAudit } from '../documents/audit.repo.js';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { bothDatabases } from '../testing/services.js';
import { driveCeremony } from './testing/drive.js';
import { judgeSignatures } from './testing/judge.js';
import { assertQualifiedSeal, createQesRequest, startQesE2E, type QesE2E } from './testing/qes-e2e.js';

const databases = await bothDatabases();

for (const d of databases) {
  describe(`qualified signatures (${d.name})`, { skip: d.skip }, () => {
    let q: QesE2E;
    before(async () => {
      q = await startQesE2E(d.database);
    });
    after(async () => q?.close());

    const sign = async (token: string, user: string, text: string) => {
      q.syncClock();
      return driveCeremony({
        origin: q.origin,
        token,
        provider: q.provider,
        user,
        body: { signature: { type: 'typed', text } },
      });
    };

    test(
      'two qualified signers, then the seal: every signature verifies, both are qualified',
      { timeout: 120_000 },
      async () => {
        const { e, provider } = q;
        const id = await createQesRequest(e);
        const doc0 = await e.api('GET', `/v1/documents/${id}`);
        assert.equal(doc0.json.signature_level, 'qes');

        const anna = await sign(await e.linkFor('anna@example.com'), 'anna', 'Anna Müller');
        assert.equal(anna.last.status, 303, anna.last.body);
        assert.match(anna.last.location ?? '', /^\/sign\//, 'back to the signing link');
        const li = await sign(await e.linkFor('li@example.com'), 'li', '李华');
        assert.equal(li.last.status, 303, li.last.body);
        await e.work();

        const doc = await e.api('GET', `/v1/documents/${id}`);
        assert.equal(doc.json.status, 'completed', doc.text);
        const quals = doc.json.signing_requests.map((r: any) => r.qualified_signature);
        assert.deepEqual(
          quals.map((x: any) => x?.provider),
          ['Test QTSP', 'Test QTSP'],
          'each signer has a qualified signature',
        );
        assert.match(quals[0].subject, /anna/);
        assert.match(quals[1].subject, /li/);

        // The appended audit certificate names each qualified signature and its certificate.
        const { text, verification: v } = await assertQualifiedSeal(e, provider, id);
        assert.equal(text.match(/Qualified electronic\s+signature/g)?.length, 2, 'one line per qualified signer');
        assert.match(text, /Test QTSP/);
        assert.ok(text.includes(quals[0].serial) && text.includes(quals[1].serial), 'both certificate serials');
        assert.ok(
          v.signatures.every((s: any) => s.intact),
          'every signature intact',
        );
        assert.equal(v.document?.id, id);

        // Access tokens and PKCE verifiers never reach the database.
        const tables = ['qes_ceremonies', 'audit_events', 'documents', 'signing_requests'] as const;
        const dump = JSON.stringify(
          await Promise.all(tables.map((t) => e.h.db.kysely.selectFrom(t).selectAll().execute())),
        );
        const tokens = provider.accessTokens();
        assert.ok(tokens.length >= 4, 'two tokens per signer were issued');
        for (const secret of tokens) assert.ok(!dump.includes(secret), 'an access token is stored');
        const verifiers = [anna, li].flatMap((dr) =>
          (dr.cookies ?? []).map((c) => JSON.parse(Buffer.from(c.split('=')[1]!, 'base64url').toString()).v as string),
        );
        assert.equal(verifiers.length, 4, 'two ceremonies per signer');
        for (const v of verifiers) assert.ok(!dump.includes(v), 'a PKCE verifier is stored');

        const audit = (await listAudit(e.h.db.kysely, id)).map((x) => x.action);
        for (const step of [
          'qes.identification_started',
          'qes.credential_checked',
          'qes.authorization_started',
          'qes.signed',
        ])
          assert.equal(audit.filter((a) => a === step).length, 2, `${step} once per signer`);
      },
    );

    test('state, PKCE and link are bound and single-use; a replayed code is refused', { timeout: 60_000 }, async () => {
      const { e, provider } = q;
      const id = await createQesRequest(e);
      const annaToken = await e.linkFor('anna@example.com');
      const liToken = await e.linkFor('li@example.com');
      q.syncClock();
      const held = await driveCeremony({
        origin: q.origin,
        token: annaToken,
        provider,
        user: 'anna',
        stopAtCallback: 0,
      });
      const callback = held.pendingCallback!;
      assert.ok(callback?.startsWith(`${q.origin}/qes/callback?`), 'the provider redirects to BASE_URL/qes/callback');

      const get = (url: string, cookie?: string) =>
        fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      // Without the browser's cookie (another browser), and with li's ceremony cookie: refused, nothing spent.
      assert.equal((await get(callback)).status, 400);
      const liHeld = await driveCeremony({ origin: q.origin, token: liToken, provider, user: 'li', stopAtCallback: 0 });
      assert.equal((await get(callback, liHeld.cookie!)).status, 400, 'another signer’s ceremony cookie');
      // A state that is not this ceremony's.
      const forged = new URL(callback);
      forged.searchParams.set('state', 'x'.repeat(32));
      assert.equal((await get(forged.toString(), held.cookie!)).status, 400, 'a forged state');
      // The right browser: accepted once (on to the provider's second authorization), then a replay is refused.
      const first = await get(callback, held.cookie!);
      assert.equal(first.status, 303);
      assert.ok(first.headers.get('location')?.startsWith(provider.url), 'on to authorize the hash');
      const replay = await get(callback, held.cookie!);
      assert.equal(replay.status, 400, 'the same state and code again');
      const doc = await e.api('GET', `/v1/documents/${id}`);
      assert.deepEqual(
        doc.json.signing_requests.map((r: any) => r.status),
        ['pending', 'pending'],
        'nothing signed',
      );
    });
  });
}

describe('qualified signatures with an ECDSA P-256 credential (SQLite)', () => {
  test('the provider signs with P-256: openssl verifies the signer signature, the report calls it qualified', async () => {
    const q = await startQesE2E('sqlite', { key: 'p256' });
    const tmp = await pdfScratch('signet-qes-ec-');
    try {
      const { e, provider } = q;
      const id = await createQesRequest(e);
      for (const [email, user] of [
        ['anna@example.com', 'anna'],
        ['li@example.com', 'li'],
      ] as const) {
        q.syncClock();
        const token = await e.linkFor(email);
        const dr = await driveCeremony({ origin: q.origin, token, provider, user });
        assert.equal(dr.last.status, 303, dr.last.body.slice(0, 300));
      }
      await e.work();
      const signed = await e.h.app.inject({
        method: 'GET',
        url: `/v1/documents/${id}/signed`,
        headers: { authorization: `Bearer ${e.token}` },
      });
      assert.equal(signed.statusCode, 200, signed.body);
      const pdf = new Uint8Array(signed.rawPayload);
      const sigs = judgeSignatures(tmp, pdf, provider.caPem);
      assert.ok(sigs[0]!.qtspVerified && sigs[1]!.qtspVerified, 'openssl verifies both ECDSA signatures');
      assert.match(sigs[0]!.signerPem ?? '', /BEGIN CERTIFICATE/);
      const report = await e.h.request('POST', '/v1/verifications', {
        token: e.token,
        rawBody: Buffer.from(pdf),
        headers: { 'content-type': 'application/pdf' },
      });
      assert.deepEqual(
        report.json.verification.signatures.map((s: { level: string | null }) => s.level),
        ['qes', 'qes', 'advanced', null],
      );
    } finally {
      await tmp.cleanup();
      await q.close();
    }
  });
});
