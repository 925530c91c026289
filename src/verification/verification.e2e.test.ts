// Sealed PDFs end to end on both databases: B-LTA judged by qpdf, pdfsig and openssl; the document says its level;
// POST /v1/verifications, the /verify page and the CA's public routes on the real app.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { assertPadesLta } from '../documents/pdf/testing/pades.js';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { completeDocument, type Completed } from '../signing/testing/complete.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';

const databases = await bothDatabases();

const verify = (e: E2E, body: Uint8Array | string, type = 'application/pdf') =>
  e.h.request('POST', '/v1/verifications', {
    token: e.token,
    rawBody: Buffer.from(body),
    headers: { 'content-type': type },
  });

for (const d of databases) {
  describe(`long-term signatures and verification (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let done: Completed;
    before(async () => {
      e = await startE2E({ database: d.database });
      done = await completeDocument(e, { signers: 2, names: ['Zoë Ångström', 'Σωκράτης Παπαδόπουλος'] });
    });
    after(() => e.close());

    test('the sealed PDF is B-LTA to qpdf, pdfsig and openssl, and the document says so', async () => {
      const doc = await e.api('GET', `/v1/documents/${done.documentId}`);
      assert.equal(doc.json.pades_level, 'B-LTA');
      assert.equal(doc.json.template_id, null);
      assert.equal(doc.json.template_version, null);
      const ca = await e.h.app.inject({ method: 'GET', url: '/pki/ca.crt' });
      assert.equal(ca.statusCode, 200);
      assert.equal(ca.headers['content-type'], 'application/pkix-cert');
      const caPem = spawnSync('openssl', ['x509', '-inform', 'DER'], { input: ca.rawPayload, encoding: 'utf8' }).stdout;
      assert.match(caPem, /BEGIN CERTIFICATE/);
      const trail = await e.api('GET', `/v1/documents/${done.documentId}/audit-trail`);
      const completed = trail.json.entries.find((x: any) => x.action === 'document.completed');
      assert.equal(completed.detail.pades_level, 'B-LTA');
      const tmp = await pdfScratch('signet-lta-e2e-');
      try {
        assertPadesLta(tmp, done.pdf, caPem, completed.detail.tsa_signed_at);
        assert.match(tmp.pdfText(done.pdf), /Σωκράτης Παπαδόπουλος/, 'Greek names survive in the sealed text');
      } finally {
        await tmp.cleanup();
      }
      // The published CRL is the CA's, current, and names no certificate.
      const crl = await e.h.app.inject({ method: 'GET', url: '/pki/crl' });
      assert.equal(crl.statusCode, 200);
      const text = spawnSync('openssl', ['crl', '-inform', 'DER', '-noout', '-text'], {
        input: crl.rawPayload,
        encoding: 'utf8',
      });
      assert.equal(text.status, 0, text.stderr);
      assert.match(text.stdout, /No Revoked Certificates/);
    });

    test('POST /v1/verifications: valid B-LTA, names the document; a flipped byte and an upload of garbage', async () => {
      const ok = await verify(e, done.pdf);
      assert.equal(ok.status, 200, ok.text);
      const v = ok.json.verification;
      assert.equal(v.verdict, 'valid', JSON.stringify(v));
      assert.equal(v.pades_level, 'B-LTA');
      assert.equal(v.modified_after_signing, false);
      assert.deepEqual(
        v.signatures.map((s: any) => [s.kind, s.intact, s.trusted, s.level]),
        [
          ['signature', true, true, 'advanced'],
          ['document_timestamp', true, true, null],
        ],
        'Signet’s seal is never a QES; a document timestamp has no level',
      );
      assert.equal(v.document.id, done.documentId);
      assert.equal(v.document.audit_chain_valid, true);

      const flipped = Buffer.from(done.pdf);
      flipped[200] ^= 0x01;
      const bad = (await verify(e, flipped)).json.verification;
      assert.equal(bad.verdict, 'invalid');
      assert.equal(bad.signatures[0].intact, false);
      assert.ok(bad.signatures[0].problem_codes.includes('digest_mismatch'), JSON.stringify(bad.signatures[0]));

      const garbage = await verify(e, 'not a pdf at all');
      assert.equal(garbage.status, 400);
      assert.equal(garbage.json.code, 'invalid_file');
      const truncated = await verify(e, done.pdf.subarray(0, done.pdf.length - 400));
      assert.equal(truncated.status, 400);
      assert.equal(truncated.json.code, 'invalid_file');
      const empty = await verify(e, '');
      assert.equal(empty.status, 400);
      const json = await e.api('POST', '/v1/verifications', { pdf: 'x' });
      assert.equal(json.status, 400);
      assert.equal(json.json.code, 'invalid_file');
      const noKey = await e.h.request('POST', '/v1/verifications', {
        rawBody: Buffer.from(done.pdf),
        headers: { 'content-type': 'application/pdf' },
      });
      assert.equal(noKey.status, 401);
    });

    test('a 41 MB body is refused with 413 before it is read', async () => {
      const big = Buffer.alloc(41 * 1024 * 1024, 0x20);
      big.write('%PDF-1.7\n', 0, 'latin1');
      const r = await verify(e, big);
      assert.equal(r.status, 413);
      assert.equal(r.json.code, 'payload_too_large');
    });

    test('the /verify page: a form without JavaScript, the report in the visitor’s language', async () => {
      const form = await e.h.request('GET', '/verify', { headers: { 'accept-language': 'de' } });
      assert.equal(form.status, 200);
      assert.match(form.text, /<html lang="de">/);
      assert.match(form.text, /enctype="multipart\/form-data"/);
      assert.doesNotMatch(form.text, /<script/);
      const boundary = '----signet' + Math.random().toString(36).slice(2);
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
        ),
        Buffer.from(done.pdf),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const page = await e.h.request('POST', '/verify', {
        rawBody: body,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'accept-language': 'de' },
      });
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /data-verdict="valid"/);
      assert.match(page.text, /Gültig/);
      assert.match(page.text, /PAdES B-LTA/);
      assert.match(page.text, /Contract to verify/);
      assert.match(page.text, /Fortgeschrittene elektronische Signatur oder Siegel/);
      assert.doesNotMatch(page.text, /Qualifizierte elektronische Signatur/);
      const junk = await e.h.request('POST', '/verify', {
        rawBody: Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.pdf"\r\n\r\nhello\r\n--${boundary}--\r\n`,
        ),
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      assert.equal(junk.status, 400);
      assert.match(junk.text, /could not be read as a PDF/);
    });
  });
}
