// Embedded signing sessions through HTTP only, on SQLite and PostgreSQL: every refusal of the contract in its order,
// the session's page and its framing headers, signing through the session (same events as the e-mail link), the
// session's end, sequential turns, per-key origin lists, and QES gating. The real app on a real port; webhooks to a
// real receiver; links from a real SMTP peer.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sha256Hex } from '../lib/crypto.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { setAllowedIps, setAllowedOrigins } from '../keys/keys.repo.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';

const databases = await bothDatabases();

const HOST = 'https://a.example';
const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;
const TOKEN_URL = /\/embed\/sign\/([A-Za-z0-9_-]{43})$/;

/** The JSON block the framed page's bridge reads. */
function bridgeOf(html: string): Record<string, any> {
  const m = /<script type="application\/json" id="bridge-data">([^<]*)<\/script>/.exec(html);
  assert.ok(m, 'the page carries its bridge data');
  return JSON.parse(m[1]!);
}

for (const d of databases) {
  describe(`embedded sign sessions (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let keyId: string;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
      keyId = (
        await e.h.db.kysely
          .selectFrom('api_keys')
          .select('id')
          .where('workspace_id', '=', e.workspaceId)
          .executeTakeFirstOrThrow()
      ).id;
      await setAllowedOrigins(e.h.db.kysely, keyId, [HOST, 'https://b.example:8443']);
    });
    after(() => e.close());

    async function newRequest(o: { signers?: number; order?: 'parallel' | 'sequential' } = {}) {
      const signers = Array.from({ length: o.signers ?? 1 }, (_, i) => ({
        role: `s${i + 1}`,
        email: email(`s${i + 1}`),
        name: `Signer ${i + 1}`,
      }));
      const r = await e.api('POST', '/v1/signing-requests', {
        signers,
        file: { name: 'nda.pdf', content_base64: b64(await makePdf({ pages: 1, text: [['Mutual NDA']] })) },
        placement: 'auto_append',
        signing_order: o.order ?? 'parallel',
      });
      assert.equal(r.status, 201, r.text);
      await e.work();
      return {
        documentId: r.json.document_id as string,
        ids: (r.json.signing_requests as { id: string }[]).map((x) => x.id),
        emails: signers.map((s) => s.email),
      };
    }

    const mint = (body: Record<string, unknown>, token = e.token) =>
      e.h.request('POST', '/v1/embedded/sign-sessions', { token, body });
    const sessionCount = async () =>
      Number(
        (await e.h.db.kysely
          .selectFrom('embed_sessions')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst())!.n,
      );

    test('refusals in the contract’s order, each creating nothing', async () => {
      const { ids } = await newRequest();
      const ok = { signing_request_id: ids[0], origin: HOST, ttl_seconds: 300, locale: 'en' };
      const before = await sessionCount();
      const expect400 = async (body: Record<string, unknown>, field: string, label: string) => {
        const r = await mint(body);
        assert.equal(r.status, 400, `${label}: ${r.text}`);
        assert.equal(r.json.code, 'invalid_request', label);
        assert.equal(r.json.meta.field, field, label);
      };

      // Plan first: a Business workspace is refused even with a body that is wrong in every way.
      const business = await e.h.tenant('business');
      const r402 = await mint({ ttl_seconds: 'x', origin: 'http://x' }, business.token);
      assert.equal(r402.status, 402, r402.text);
      assert.equal(r402.json.code, 'enterprise-required');
      assert.equal(r402.json.meta.tier, 'business');
      const notJson = await e.h.request('POST', '/v1/embedded/sign-sessions', {
        token: business.token,
        rawBody: '{not json',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(notJson.status, 402, 'the plan is refused before the body is parsed');

      // The body: each of the four is required; ttl and locale are never clamped or defaulted.
      for (const k of Object.keys(ok)) {
        const { [k]: _, ...rest } = ok as Record<string, unknown>;
        await expect400(rest, k, `missing ${k}`);
      }
      for (const ttl of [59, 901, '300', 300.5, 0, -60, null])
        await expect400({ ...ok, ttl_seconds: ttl }, 'ttl_seconds', `ttl ${JSON.stringify(ttl)}`);
      for (const locale of ['xx', 'EN', 'en-US', ''])
        await expect400({ ...ok, locale }, 'locale', `locale ${JSON.stringify(locale)}`);
      await expect400({ ...ok, extra: 1 }, '', 'an unknown property');

      // The origin's form, then whether this key registered it.
      for (const origin of [
        'https://a.example/',
        'http://a.example',
        'https://*.example',
        'https://u:p@a.example',
        'https://a.example?x',
        'https://a.example#top',
        'https://a.example/path',
        ' https://a.example',
        'a.example',
        'https://',
      ])
        await expect400({ ...ok, origin }, 'origin', `origin ${JSON.stringify(origin)}`);
      for (const origin of ['https://c.example', 'https://a.example:8443', 'https://b.example']) {
        const r = await mint({ ...ok, origin });
        assert.equal(r.status, 400, `${origin}: ${r.text}`);
        assert.equal(r.json.code, 'origin_not_allowed', origin);
      }

      // Wrong in two ways: the earlier code wins.
      await expect400({ ...ok, ttl_seconds: 901, origin: 'http://a.example' }, 'ttl_seconds', 'ttl before origin');
      await expect400({ ...ok, locale: 'xx', origin: 'https://c.example' }, 'locale', 'locale before registration');
      const twice = await mint({ ...ok, origin: 'https://c.example', signing_request_id: 'sr_nope' });
      assert.equal(twice.json.code, 'origin_not_allowed', 'origin before the request lookup');

      // The request: missing, or another workspace's.
      const missing = await mint({ ...ok, signing_request_id: 'sr_000000000000000000000000' });
      assert.equal(missing.status, 404);
      assert.equal(missing.json.code, 'not_found');
      const other = await e.h.tenant('enterprise');
      await setAllowedOrigins(e.h.db.kysely, other.keyId, [HOST]);
      const foreign = await mint(ok, other.token);
      assert.equal(foreign.status, 404, 'another workspace’s request is not found');

      assert.equal(await sessionCount(), before, 'no refusal created a session');

      // Both ends of the ttl range, and an origin named with its case and default port.
      for (const [ttl_seconds, origin] of [
        [60, HOST],
        [900, 'https://A.Example:443'],
        [120, 'https://B.EXAMPLE:8443'],
      ] as const) {
        const at = e.h.clock.now();
        const r = await mint({ ...ok, ttl_seconds, origin });
        assert.equal(r.status, 201, r.text);
        assert.equal(r.json.origin, origin.toLowerCase().replace(':443', ''));
        assert.equal(Date.parse(r.json.expires_at), at + ttl_seconds * 1000);
      }
      assert.equal(await sessionCount(), before + 3);
    });

    test('the session: response, token kept only as a hash, framable page only by its origin', async () => {
      const { ids, emails } = await newRequest();
      const r = await mint({ signing_request_id: ids[0], origin: HOST, ttl_seconds: 300, locale: 'de' });
      assert.equal(r.status, 201, r.text);
      const s = r.json;
      assert.match(s.id, /^ses_[0-9a-f]{24}$/);
      assert.deepEqual(Object.keys(s).sort(), ['expires_at', 'id', 'locale', 'origin', 'signing_request_id', 'url']);
      assert.equal(s.signing_request_id, ids[0]);
      assert.equal(s.locale, 'de');
      assert.match(s.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(s.url.startsWith(`${e.h.config.baseUrl}/embed/sign/`), s.url);
      const token = TOKEN_URL.exec(s.url)![1]!;
      const row = await e.h.db.kysely
        .selectFrom('embed_sessions')
        .selectAll()
        .where('id', '=', s.id)
        .executeTakeFirst();
      assert.equal(row!.token_hash, sha256Hex(token));
      assert.ok(!JSON.stringify(row).includes(token), 'the token itself is not stored');

      // Minting changed nothing about the request.
      const sr = await e.api('GET', `/v1/signing-requests/${ids[0]}`);
      assert.equal(sr.json.status, 'pending');
      assert.equal(sr.json.viewed_at, null);

      const page = await e.h.request('GET', `/embed/sign/${token}`);
      assert.equal(page.status, 200, page.text);
      assert.match(page.headers['content-security-policy']!, /frame-ancestors https:\/\/a\.example(;|$)/);
      assert.equal(page.headers['x-frame-options'], undefined, 'no X-Frame-Options on an embed page');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.match(page.text, /<html lang="de">/, 'the session’s locale');
      const bridge = bridgeOf(page.text);
      assert.deepEqual(
        { origin: bridge.origin, session_id: bridge.session_id, signing_request_id: bridge.signing_request_id },
        { origin: HOST, session_id: s.id, signing_request_id: ids[0] },
      );
      assert.equal(bridge.ended, null);
      assert.match(page.text, /data-base="\/embed\/sign\//);

      // Every other page keeps refusing frames: the e-mail link's page, and an unknown session's.
      const link = await e.linkFor(emails[0]!);
      const mailPage = await e.h.request('GET', `/sign/${link}`);
      assert.equal(mailPage.status, 200);
      assert.equal(mailPage.headers['x-frame-options'], 'DENY');
      assert.match(mailPage.headers['content-security-policy']!, /frame-ancestors 'none'/);
      const unknown = await e.h.request('GET', `/embed/sign/${'A'.repeat(43)}`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.headers['x-frame-options'], 'DENY');
      assert.match(unknown.headers['content-security-policy']!, /frame-ancestors 'none'/);
      const pdf = await e.h.request('GET', `/embed/sign/${token}/document.pdf`);
      assert.equal(pdf.status, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
    });

    test('signing through a session: one viewed event in total, the same webhooks, then the ended page', async () => {
      const { ids, emails, documentId } = await newRequest();
      const s = (await mint({ signing_request_id: ids[0], origin: HOST, ttl_seconds: 600, locale: 'en' })).json;
      const token = TOKEN_URL.exec(s.url)![1]!;
      // The IP allowlist gates only the key's own /v1 calls, never the session's page.
      await setAllowedIps(e.h.db.kysely, keyId, ['10.9.8.7']);
      try {
        assert.equal((await e.h.request('POST', `/embed/sign/${token}/view`)).status, 200);
        assert.equal((await e.h.request('POST', `/embed/sign/${token}/view`)).status, 200, 'viewing again is fine');
        const link = await e.linkFor(emails[0]!);
        assert.equal((await e.h.request('POST', `/sign/${link}/view`)).status, 200, 'the e-mail link still works');
        const signed = await e.h.request('POST', `/embed/sign/${token}/sign`, {
          body: { signature: { type: 'typed', text: 'Signer One' } },
          headers: { 'user-agent': 'embedded-browser/1.0' },
        });
        assert.equal(signed.status, 200, signed.text);
        assert.equal(signed.json.status, 'signed');
        const again = await e.h.request('POST', `/embed/sign/${token}/sign`, {
          body: { signature: { type: 'typed', text: 'Signer One' } },
        });
        assert.equal(again.status, 409);
        assert.equal(again.json.code, 'request_not_signable');
        assert.equal(again.json.meta.state, 'signed', 'a lost answer can be recovered: the state says signed');

        const ended = await e.h.request('GET', `/embed/sign/${token}`);
        assert.equal(ended.status, 200);
        assert.match(ended.headers['content-security-policy']!, /frame-ancestors https:\/\/a\.example/);
        assert.deepEqual(bridgeOf(ended.text).ended, { type: 'signed', data: {} });
        assert.match(ended.text, /This signing session has ended\./);
      } finally {
        await setAllowedIps(e.h.db.kysely, keyId, []);
      }
      await e.work();
      assert.equal(e.eventsOf('signing_request.viewed', documentId).length, 1, 'one viewed event in total');
      const ev = e.eventsOf('signing_request.signed', documentId);
      assert.equal(ev.length, 1);
      assert.equal(ev[0]!.signing_request_id, ids[0]);
      assert.equal(e.eventsOf('document.completed', documentId).length, 1, 'sealed as after an e-mail signature');
      const sr = await e.api('GET', `/v1/signing-requests/${ids[0]}`);
      assert.equal(sr.json.status, 'signed');
      // The audit trail records that the signer acted through this session, framed by this origin.
      const trail = await e.api('GET', `/v1/documents/${documentId}/audit-trail`);
      assert.equal(trail.json.chain_valid, true);
      const via = { session_id: s.id, origin: HOST };
      for (const action of ['signing_request.viewed', 'signing_request.signed']) {
        const entry = trail.json.entries.find((x: any) => x.action === action);
        assert.deepEqual(entry.detail.embedded_session, via, action);
      }
      assert.equal(
        trail.json.entries.find((x: any) => x.action === 'signing_request.signed').user_agent,
        'embedded-browser/1.0',
      );
      const minted = await mint({ signing_request_id: ids[0], origin: HOST, ttl_seconds: 60, locale: 'en' });
      assert.equal(minted.status, 409);
      assert.equal(minted.json.code, 'request_not_signable');
    });

    test('the session ends at expires_at: ended page posting expired, actions refused; declined and withdrawn', async () => {
      const { ids } = await newRequest({ signers: 2 });
      const s = (await mint({ signing_request_id: ids[0], origin: HOST, ttl_seconds: 60, locale: 'fr' })).json;
      const token = TOKEN_URL.exec(s.url)![1]!;
      e.h.clock.advance(60_000);
      const page = await e.h.request('GET', `/embed/sign/${token}`);
      assert.equal(page.status, 200);
      assert.deepEqual(bridgeOf(page.text).ended, { type: 'expired', data: {} });
      assert.match(page.text, /Cette session de signature est terminée\./);
      for (const [p, body] of [
        ['view', {}],
        ['sign', { signature: { type: 'typed', text: 'Late' } }],
        ['decline', { reason: 'late' }],
      ] as const) {
        const r = await e.h.request('POST', `/embed/sign/${token}/${p}`, { body });
        assert.equal(r.status, 409, p);
        assert.equal(r.json.meta.state, 'session_expired', p);
      }
      assert.equal((await e.h.request('GET', `/embed/sign/${token}/document.pdf`)).status, 409);
      const sr = await e.api('GET', `/v1/signing-requests/${ids[0]}`);
      assert.equal(sr.json.status, 'pending', 'an ended session changed nothing');

      // A new session for the other signer; declining through it ends its page with the reason.
      const s2 = (await mint({ signing_request_id: ids[1], origin: HOST, ttl_seconds: 300, locale: 'en' })).json;
      const t2 = TOKEN_URL.exec(s2.url)![1]!;
      const declined = await e.h.request('POST', `/embed/sign/${t2}/decline`, { body: { reason: 'Wrong amount' } });
      assert.equal(declined.status, 200, declined.text);
      assert.deepEqual(bridgeOf((await e.h.request('GET', `/embed/sign/${t2}`)).text).ended, {
        type: 'declined',
        data: { reason: 'Wrong amount' },
      });
      // The first signer's request was withdrawn with the document: a fresh session is refused.
      const again = await mint({ signing_request_id: ids[0], origin: HOST, ttl_seconds: 300, locale: 'en' });
      assert.equal(again.status, 409);
      assert.equal(again.json.code, 'request_not_signable');
    });

    test('a request past its own expiry is not signable', async () => {
      const { ids } = await newRequest();
      const s = (await mint({ signing_request_id: ids[0], origin: HOST, ttl_seconds: 900, locale: 'en' })).json;
      e.h.clock.advance(31 * 24 * 3600_000);
      const r = await mint({ signing_request_id: ids[0], origin: HOST, ttl_seconds: 60, locale: 'en' });
      assert.equal(r.status, 409);
      assert.equal(r.json.code, 'request_not_signable');
      assert.ok(s.id, 'the first session was minted');
    });

    test('sequential: the second signer’s session is refused until the first signs, then works', async () => {
      const { ids, emails } = await newRequest({ signers: 2, order: 'sequential' });
      const body = { signing_request_id: ids[1], origin: HOST, ttl_seconds: 300, locale: 'en' };
      const early = await mint(body);
      assert.equal(early.status, 409, early.text);
      assert.equal(early.json.code, 'request_not_signable');
      const first = await e.linkFor(emails[0]!);
      const signed = await e.h.request('POST', `/sign/${first}/sign`, {
        body: { signature: { type: 'typed', text: 'First' } },
      });
      assert.equal(signed.status, 200, signed.text);
      const later = await mint(body);
      assert.equal(later.status, 201, later.text);
      const page = await e.h.request('GET', new URL(later.json.url).pathname);
      assert.equal(page.status, 200);
      assert.equal(bridgeOf(page.text).ended, null, 'the signing page, not an ended one');
    });

    test('origins are per key: a second key of the workspace has its own list, empty allows none', async () => {
      const { ids } = await newRequest();
      const second = await e.h.key(e.workspaceId);
      const body = { signing_request_id: ids[0], origin: HOST, ttl_seconds: 300, locale: 'en' };
      const none = await mint(body, second.plaintext);
      assert.equal(none.status, 400);
      assert.equal(none.json.code, 'origin_not_allowed', 'an empty list allows no origin');
      await setAllowedOrigins(e.h.db.kysely, second.id, ['https://z.example']);
      assert.equal((await mint(body, second.plaintext)).json.code, 'origin_not_allowed');
      assert.equal((await mint({ ...body, origin: 'https://z.example' }, second.plaintext)).status, 201);
      assert.equal((await mint({ ...body, origin: 'https://z.example' })).json.code, 'origin_not_allowed');
    });

    test('QES is Enterprise-only and, with no qualified provider, 503 qes_unavailable; ses is the default', async () => {
      const file = { name: 'q.pdf', content_base64: b64(await makePdf({ pages: 1, text: [['QES']] })) };
      const body = {
        signers: [{ role: 'a', email: email('q'), name: 'Q' }],
        file,
        placement: 'auto_append',
        signature_level: 'qes',
      };
      const business = await e.h.tenant('business');
      const r402 = await e.h.request('POST', '/v1/signing-requests', { token: business.token, body });
      assert.equal(r402.status, 402, r402.text);
      assert.equal(r402.json.code, 'enterprise-required');
      assert.equal(r402.json.meta.tier, 'business');
      const r503 = await e.api('POST', '/v1/signing-requests', body);
      assert.equal(r503.status, 503, r503.text);
      assert.equal(r503.json.code, 'qes_unavailable');
      assert.equal((await e.api('POST', '/v1/signing-requests', { ...body, signature_level: 'aes' })).status, 400);
      assert.equal((await e.api('POST', '/v1/signing-requests', { ...body, signature_level: 'ses' })).status, 201);
    });
  });
}

describe('signet.js, the host pages’ helper', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ tier: 'enterprise' });
  });
  after(() => e.close());

  test('served as JavaScript any site may load, cached and revalidated by ETag', async () => {
    const r = await e.h.request('GET', '/embed/signet.js');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type']!, /^text\/javascript/);
    assert.match(r.headers['cache-control']!, /public, max-age=\d+/);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.equal(r.headers['cross-origin-resource-policy'], 'cross-origin');
    assert.match(r.text, /Signet/);
    const again = await e.h.request('GET', '/embed/signet.js', { headers: { 'if-none-match': r.headers.etag! } });
    assert.equal(again.status, 304);
    const types = await e.h.request('GET', '/embed/signet.d.ts');
    assert.equal(types.status, 200);
    assert.match(types.text, /mount\(element: HTMLElement \| string/);
  });
});
