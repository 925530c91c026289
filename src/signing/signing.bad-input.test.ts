// Hostile and odd input at POST /v1/signing-requests: always a catalogue 4xx or a correct success, nothing
// half-created, and the server keeps serving.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fc from 'fast-check';
import { startHarness, type Harness } from '../testing/harness.js';
import { catalogue } from '../lib/errors.js';
import { makeBigPdf, makePdf } from '../documents/pdf/testing/fixtures.js';
import { setRateLimit } from '../keys/keys.repo.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';

const CODES = new Set(Object.values(catalogue).map((c) => c.code));
const signer = [{ role: 'signer', email: 'ana@example.com', name: 'Ana' }];

async function fileServer(routes: Record<string, (res: http.ServerResponse) => void>) {
  const server = http.createServer((req, res) => (routes[req.url ?? ''] ?? ((r) => r.writeHead(404).end()))(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const countDocs = async (h: Harness) =>
  Number(
    (
      await h.db.kysely
        .selectFrom('documents')
        .select((x) => x.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('file_url under the outbound rule (private networks refused)', () => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await startHarness({ env: { SIGNET_ALLOW_PRIVATE_NETWORK: '0' } });
    token = (await h.tenant('business')).token;
  });
  after(() => h.close());

  test('loopback, private, link-local and non-http file_url values are 400 file_url_unreachable', async () => {
    for (const file_url of [
      'http://127.0.0.1:8080/a.pdf',
      'http://localhost/a.pdf',
      'http://10.1.2.3/a.pdf',
      'http://192.168.0.10/a.pdf',
      'http://169.254.169.254/latest',
      'http://[::1]/a.pdf',
      'ftp://files.example/a.pdf',
      'http://u:p@files.example/a.pdf',
    ]) {
      const r = await h.request('POST', '/v1/signing-requests', {
        token,
        body: { signers: signer, file_url, placement: 'auto_append' },
      });
      assert.equal(r.status, 400, file_url);
      assert.equal(r.json.code, 'file_url_unreachable', file_url);
    }
    assert.equal(await countDocs(h), 0);
  });
});

describe('file_url fetching', () => {
  let e: E2E;
  let files: Awaited<ReturnType<typeof fileServer>>;
  before(async () => {
    e = await startE2E();
    const pdf = await makePdf({ text: [['Contract']] });
    const big = await makeBigPdf(26 * 1024 * 1024);
    files = await fileServer({
      '/ok.pdf': (res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from(pdf)),
      '/moved': (res) => res.writeHead(302, { location: '/ok.pdf' }).end(),
      '/loop': (res) => res.writeHead(302, { location: '/loop' }).end(),
      '/to-credentials': (res) => res.writeHead(302, { location: 'http://user:secret@127.0.0.1/ok.pdf' }).end(),
      '/to-ftp': (res) => res.writeHead(301, { location: 'ftp://127.0.0.1/ok.pdf' }).end(),
      '/big.pdf': (res) => res.writeHead(200).end(Buffer.from(big)),
      '/gone': (res) => res.writeHead(500).end(),
      '/html': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not a pdf</html>'),
    });
  });
  after(async () => {
    await files.close();
    await e.close();
  });

  test('a file_url (also behind one redirect) is fetched and used', async () => {
    for (const p of ['/ok.pdf', '/moved']) {
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: signer,
        file_url: files.url(p),
        placement: 'auto_append',
      });
      assert.equal(r.status, 201, `${p}: ${r.text}`);
      const doc = await e.api('GET', `/v1/documents/${r.json.document_id}`);
      assert.equal(doc.json.file_name, 'ok.pdf'.replace('ok.pdf', p === '/moved' ? 'moved' : 'ok.pdf'));
    }
  });

  test('redirect loops, redirects to refused URLs, errors, oversize and non-PDF answers are refused cleanly', async () => {
    const before = await countDocs(e.h);
    const cases: Array<[string, number, string]> = [
      ['/loop', 400, 'file_url_unreachable'],
      ['/to-credentials', 400, 'file_url_unreachable'],
      ['/to-ftp', 400, 'file_url_unreachable'],
      ['/gone', 400, 'file_url_unreachable'],
      ['/missing', 400, 'file_url_unreachable'],
      ['/big.pdf', 413, 'file_too_large'],
      ['/html', 400, 'invalid_file'],
    ];
    for (const [p, status, code] of cases) {
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: signer,
        file_url: files.url(p),
        placement: 'auto_append',
      });
      assert.equal(r.status, status, `${p}: ${r.text}`);
      assert.equal(r.json.code, code, p);
    }
    assert.equal(await countDocs(e.h), before);
  });

  test('odd but valid PDFs (rotated pages, form fields, an existing signature field) complete and seal', async () => {
    for (const opts of [
      { rotate: 90 },
      { withForm: true },
      { withSignatureField: true },
      { rotate: [0, 180, 270], pages: 3 },
    ]) {
      const pdf = await makePdf({ ...opts, text: [['Agreement']] });
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: [{ ...signer[0]!, email: `odd${Math.random()}@example.com` }],
        file: { name: 'odd.pdf', content_base64: b64(pdf) },
        placement: 'auto_append',
      });
      assert.equal(r.status, 201, `${JSON.stringify(opts)}: ${r.text}`);
      await e.work();
      const tk = await e.linkFor(r.json.signing_requests[0].signer.email);
      assert.equal(
        (await e.h.request('POST', `/sign/${tk}/sign`, { body: { signature: { type: 'typed', text: 'Ana' } } })).status,
        200,
      );
      await e.work();
      assert.equal(
        (await e.api('GET', `/v1/documents/${r.json.document_id}`)).json.status,
        'completed',
        JSON.stringify(opts),
      );
    }
  });

  test('a 1000-page PDF and a PDF over 25 MB are refused with clear codes, and the server keeps serving', async () => {
    const thousand = await makePdf({ pages: 1000 });
    const r1 = await e.api('POST', '/v1/signing-requests', {
      signers: signer,
      file: { name: 'long.pdf', content_base64: b64(thousand) },
      placement: 'auto_append',
    });
    assert.equal(r1.status, 400);
    assert.equal(r1.json.code, 'invalid_file');
    const big = await makeBigPdf(25 * 1024 * 1024 + 10);
    const r2 = await e.api('POST', '/v1/signing-requests', {
      signers: signer,
      file: { name: 'big.pdf', content_base64: b64(big) },
      placement: 'auto_append',
    });
    assert.equal(r2.status, 413);
    assert.equal(r2.json.code, 'file_too_large');
    assert.equal((await e.api('GET', '/v1/me')).status, 200);
  });
});

describe('fuzzed bodies at POST /v1/signing-requests and the signer endpoints', () => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await startHarness();
    const t = await h.tenant('business');
    await setRateLimit(h.db.kysely, t.keyId, 1_000_000);
    token = t.token;
  });
  after(() => h.close());

  test('arbitrary JSON never yields a 5xx or a document', async () => {
    const validPdf = b64(await makePdf({ text: [['{{signature:signer}}']] }));
    const signerArb = fc.record(
      {
        role: fc.oneof(fc.string(), fc.constant('signer')),
        email: fc.oneof(fc.emailAddress(), fc.string()),
        name: fc.string(),
      },
      { requiredKeys: [] },
    );
    const body = fc.record(
      {
        signers: fc.oneof(fc.array(signerArb, { maxLength: 3 }), fc.anything()),
        file: fc.oneof(
          fc.record({
            name: fc.string(),
            content_base64: fc.oneof(fc.base64String(), fc.string(), fc.constant(validPdf)),
          }),
          fc.anything(),
        ),
        file_url: fc.oneof(fc.webUrl(), fc.string()),
        placement: fc.oneof(fc.constantFrom('anchors', 'auto_append', 'coordinates', 'manual'), fc.anything()),
        fields: fc.anything(),
        signing_order: fc.oneof(fc.constantFrom('parallel', 'sequential'), fc.string()),
        locale: fc.oneof(fc.constantFrom('en', 'de', 'xx'), fc.string()),
        expires_at: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string(),
        ),
        title: fc.string({ unit: 'grapheme', maxLength: 300 }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const r = await h.request('POST', '/v1/signing-requests', { token, body: b });
        assert.ok(r.status < 500, `${r.status} ${r.text}`);
        if (r.status !== 201) {
          assert.ok(CODES.has(r.json?.code), r.text);
          assert.equal(typeof r.json.error, 'string');
        }
      }),
      { numRuns: 150 },
    );
    const docs = await h.db.kysely.selectFrom('documents').select('id').execute();
    const reqs = await h.db.kysely.selectFrom('signing_requests').select('document_id').execute();
    assert.ok(
      reqs.every((r) => docs.some((d) => d.id === r.document_id)),
      'no orphan request rows',
    );
  });

  test('signer endpoints: junk tokens are 404, junk bodies 400, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 120 }),
        fc.anything(),
        fc.constantFrom('view', 'sign', 'decline'),
        async (tok, b, action) => {
          const r = await h.request('POST', `/sign/${encodeURIComponent(tok) || 'x'}/${action}`, { body: b });
          assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${r.text}`);
          assert.ok(CODES.has(r.json?.code), r.text);
        },
      ),
      { numRuns: 150 },
    );
    const page = await h.request('GET', '/sign/not-a-token');
    assert.equal(page.status, 404);
    assert.match(page.headers['content-type']!, /text\/html/);
  });
});
