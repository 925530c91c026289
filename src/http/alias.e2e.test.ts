// The alias address with a path: with ALIAS_BASE_URL=http://127.0.0.1:PORT/esign, `/esign/v1/…` is the same API
// with the same keys, one rate-limit window per key and one set of idempotency records across both addresses, while
// links (mail, signed_pdf_url) keep using BASE_URL and nothing else under the alias's path is served. Through the
// real app on a real port, on both databases.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { completeDocument } from '../signing/testing/complete.js';
import { plainPdf, signers } from '../signing/testing/requests.js';
import { freePort } from '../testing/harness.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';

const databases = await bothDatabases();

for (const d of databases) {
  describe(`ALIAS_BASE_URL with a path (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let alias: string;
    before(async () => {
      const port = await freePort();
      alias = `http://127.0.0.1:${port}/esign`;
      e = await startE2E({ database: d.database, port, env: { ALIAS_BASE_URL: alias } });
    });
    after(() => e?.close());
    const viaAlias = (
      method: string,
      p: string,
      o: { token?: string; body?: unknown; headers?: Record<string, string> },
    ) => e.h.request(method, `/esign${p}`, o);

    test('GET /esign/v1/me and POST /esign/v1/signing-requests with the same key; links keep BASE_URL', async () => {
      const base = await e.h.request('GET', '/v1/me', { token: e.token });
      const me = await viaAlias('GET', '/v1/me', { token: e.token });
      assert.equal(me.status, 200);
      assert.deepEqual(me.json, base.json);
      assert.equal(me.headers['ratelimit-limit'], undefined, '/v1/me stays exempt under the alias');

      const through = { ...e, api: (m: string, p: string, body?: unknown) => viaAlias(m, p, { token: e.token, body }) };
      const done = await completeDocument(through);
      const doc = await viaAlias('GET', `/v1/documents/${done.documentId}`, { token: e.token });
      assert.equal(doc.status, 200);
      assert.equal(doc.json.signed_pdf_url, `${e.h.config.baseUrl}/v1/documents/${done.documentId}/signed`);
      assert.equal(doc.json.audit_trail_url, `${e.h.config.baseUrl}/v1/documents/${done.documentId}/audit-trail`);
      const [completed] = e.eventsOf('document.completed', done.documentId);
      assert.equal(completed!.signed_pdf_url, doc.json.signed_pdf_url);
      const pdf = await viaAlias('GET', `/v1/documents/${done.documentId}/signed`, { token: e.token });
      assert.equal(pdf.status, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');

      const mails = (await e.smtp.parsed()).map((m) => m.text ?? '').filter((t) => /\/(sign|copy)\//.test(t));
      assert.ok(mails.length >= 2, 'the invitation and the completion e-mail');
      for (const text of mails) {
        assert.ok(text.includes(`${e.h.config.baseUrl}/`), 'mail links are at BASE_URL');
        assert.ok(!text.includes('/esign'), 'never at the alias');
      }
    });

    test('an idempotent POST replayed through the other address gets the stored answer', async () => {
      const body = async () => ({
        signers: signers(1),
        file: { name: 'contract.pdf', content_base64: await plainPdf(1) },
        placement: 'auto_append',
      });
      for (const [first, second] of [
        ['', '/esign'],
        ['/esign', ''],
      ] as const) {
        const b = await body();
        const headers = { 'idempotency-key': `alias-${first || 'base'}` };
        const created = await e.h.request('POST', `${first}/v1/signing-requests`, { token: e.token, body: b, headers });
        assert.equal(created.status, 201, created.text);
        assert.equal(created.headers['idempotent-replayed'], undefined);
        const replay = await e.h.request('POST', `${second}/v1/signing-requests`, { token: e.token, body: b, headers });
        assert.equal(replay.status, 201);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay.json, created.json);
      }
      const docs = await e.h.db.kysely.selectFrom('documents').select('id').execute();
      assert.equal(new Set(docs.map((x) => x.id)).size, docs.length);
    });

    test('one rate-limit window per key across both addresses: the 61st request gets 429', async () => {
      const t = await e.h.tenant('business');
      for (let i = 0; i < 60; i++) {
        const r = await e.h.request('GET', `${i % 2 ? '/esign' : ''}/v1/hooks`, { token: t.token });
        assert.equal(r.status, 200, `request ${i + 1}`);
        assert.equal(r.headers['ratelimit-remaining'], String(59 - i), `request ${i + 1}`);
      }
      for (const prefix of ['/esign', '']) {
        const limited = await e.h.request('GET', `${prefix}/v1/hooks`, { token: t.token });
        assert.equal(limited.status, 429);
        assert.equal(limited.json.code, 'rate_limited');
        assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After on the 429');
      }
      e.h.clock.advance(60_000);
      assert.equal((await viaAlias('GET', '/v1/hooks', { token: t.token })).status, 200, 'a new window');
      // The key-use audit names the canonical route, whichever address was called.
      await e.h.app.flushKeyUses();
      const routes = await e.h.db.kysely
        .selectFrom('key_uses')
        .select(['route', 'status'])
        .where('key_id', '=', t.keyId)
        .execute();
      assert.equal(routes.length, 63);
      assert.deepEqual([...new Set(routes.map((r) => r.route))], ['/v1/hooks']);
    });

    test('only /v1 is served under the alias’s path; the OpenAPI document keeps both servers', async () => {
      for (const p of [
        '/esign/other',
        '/esignx/v1/me',
        '/esign/v1x/me',
        '/esign/docs',
        '/esign',
        '/esign/esign/v1/me',
      ]) {
        const r = await e.h.request('GET', p, { token: e.token });
        assert.equal(r.status, 404, p);
        assert.equal(r.json.code, 'not_found', p);
      }
      const unknown = await viaAlias('GET', '/v1/nothing-here', { token: e.token });
      assert.equal(unknown.status, 404);
      assert.equal((await viaAlias('GET', '/v1/me', {})).json.code, 'invalid_key', 'the gate runs under the alias');
      const doc = await viaAlias('GET', '/v1/openapi.json', {});
      assert.equal(doc.status, 200);
      assert.deepEqual(
        doc.json.servers.map((s: { url: string }) => s.url),
        [e.h.config.baseUrl, alias],
      );
      assert.equal((await viaAlias('GET', '/v1?x=1', { token: e.token })).json.code, 'not_found', '/esign/v1?…');
      assert.equal((await viaAlias('GET', '/v1/me?x=1', { token: e.token })).status, 200, 'a query string is kept');
    });
  });
}

describe('ALIAS_BASE_URL without a path', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ env: { ALIAS_BASE_URL: 'http://localhost:9/' } });
  });
  after(() => e?.close());

  test('serves /v1 as before and only adds an OpenAPI server', async () => {
    assert.equal((await e.api('GET', '/v1/me')).status, 200);
    const doc = await e.h.request('GET', '/v1/openapi.json');
    assert.deepEqual(
      doc.json.servers.map((s: { url: string }) => s.url),
      [e.h.config.baseUrl, 'http://localhost:9'],
    );
  });
});
