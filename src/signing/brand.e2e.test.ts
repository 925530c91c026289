// A branded workspace's sealed document end to end (issue 27): the audit page sealed into the PDF and the audit
// certificate carry the logo and the region, the file still passes qpdf and pdfsig; the /verify report names the
// sending workspace with its logo and colour, allowed by a hash in the page's CSP; without a brand, none of it.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pdfScratch, type PdfScratch } from '../documents/pdf/testing/tools.js';
import { brandStyleSource } from '../web/brand.js';
import { logoPng, setBrand } from '../testing/brand.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { completeDocument, type Completed } from './testing/complete.js';

const ACCENT = '#1b1b1b';
const SHOTS = '/tmp/shots-brand-applied';

describe('a branded workspace’s sealed document', () => {
  let e: E2E;
  let tmp: PdfScratch;
  let done: Completed;
  before(async () => {
    e = await startE2E();
    tmp = await pdfScratch('signet-brand-e2e-');
    fs.mkdirSync(SHOTS, { recursive: true });
    await setBrand(e.h, e.workspaceId, { color: ACCENT, logo: logoPng(), region: 'eu-central' });
    done = await completeDocument(e, { title: 'Branded lease' });
  });
  after(async () => {
    await tmp?.cleanup();
    await e?.close();
  });

  const pages = (pdf: Uint8Array) => Number(/Pages:\s+(\d+)/.exec(tmp.poppler('pdfinfo', pdf))![1]);
  const imagesOn = (pdf: Uint8Array, page: number) =>
    execFileSync('pdfimages', ['-list', '-f', String(page), '-l', String(page), tmp.save(pdf)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .slice(2)
      .filter((row) => row.trim().split(/\s+/)[2] === 'image').length;
  const shoot = (pdf: Uint8Array, page: number, name: string) =>
    execFileSync('pdftoppm', [
      ...['-r', '60', '-png', '-singlefile', '-f', String(page), '-l', String(page)],
      ...[tmp.save(pdf), path.join(SHOTS, name)],
    ]);

  test('the sealed PDF: the audit page has the logo and the region; qpdf and pdfsig still pass', async () => {
    tmp.qpdfCheck(done.pdf);
    const sig = spawnSync('pdfsig', [tmp.save(done.pdf)], { encoding: 'utf8' }).stdout;
    assert.match(sig.split('Signature #2')[0]!, /Signature Validation: Signature is Valid/, sig);
    const last = pages(done.pdf);
    assert.equal(imagesOn(done.pdf, last), 1, 'the logo on the audit page');
    assert.equal(imagesOn(done.pdf, 1), 0, 'and not on the document');
    assert.match(tmp.pdfText(done.pdf, { page: last }), /Hosting region\s+eu-central/);
    shoot(done.pdf, last, 'sealed-audit-page');
  });

  test('the audit certificate (GET …/audit-trail as PDF): logo on page 1, the region line', async () => {
    const r = await e.h.app.inject({
      method: 'GET',
      url: `/v1/documents/${done.documentId}/audit-trail`,
      headers: { authorization: `Bearer ${e.token}`, accept: 'application/pdf' },
    });
    assert.equal(r.statusCode, 200, r.body);
    const pdf = new Uint8Array(r.rawPayload);
    tmp.qpdfCheck(pdf);
    assert.equal(imagesOn(pdf, 1), 1);
    assert.match(tmp.pdfText(pdf, { page: 1 }), /Hosting region\s+eu-central/);
    shoot(pdf, 1, 'certificate-e2e');
  });

  /** POST /verify with the file, as a browser's form would. */
  async function verifyPage(pdf: Uint8Array, lang = 'en') {
    const boundary = '----signet' + Math.random().toString(36).slice(2);
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
      ),
      Buffer.from(pdf),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const r = await e.h.request('POST', '/verify', {
      rawBody: body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'accept-language': lang },
    });
    assert.equal(r.status, 200, r.text);
    return r;
  }

  test('the /verify report names the sender with logo and accent; the CSP allows exactly that style', async () => {
    const r = await verifyPage(done.pdf, 'de');
    assert.match(r.text, /data-verdict="valid"/);
    const logo = /<img class="sender-logo" src="(\/brand\/[^"]+)" alt="Test Workspace">/.exec(r.text);
    assert.ok(logo, 'the logo, named by the workspace');
    assert.match(r.text, /Gesendet von Test Workspace <span class="via-service">über Signet<\/span>/);
    const style = /<style>([^<]*)<\/style>/.exec(r.text);
    assert.ok(style, 'the accent as a style element');
    assert.equal(style[1], `:root{--primary:${ACCENT};--primary-dark:#161616;--brand-accent:${ACCENT}}`);
    const csp = r.headers['content-security-policy']!;
    const source = brandStyleSource({ name: '', color: ACCENT, logo: null })!;
    assert.ok(csp.includes(`style-src 'self' '${source}'`), csp);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.match(csp, /frame-ancestors 'none'/);
    // The logo's address answers with the image.
    const img = await e.h.request('GET', logo[1]!);
    assert.equal(img.status, 200);
    assert.equal(img.headers['content-type'], 'image/png');
    // The API's report is the interface's: nothing about the sender.
    const api = await e.h.request('POST', '/v1/verifications', {
      token: e.token,
      rawBody: Buffer.from(done.pdf),
      headers: { 'content-type': 'application/pdf' },
    });
    assert.equal(api.status, 200, api.text);
    assert.doesNotMatch(api.text, /brand|logo|Test Workspace/);
  });

  test('without a brand: no sender block, no style element, the CSP as before', async () => {
    const plainForm = await e.h.request('GET', '/verify');
    await setBrand(e.h, e.workspaceId, { color: null, logo: null });
    try {
      const r = await verifyPage(done.pdf);
      assert.doesNotMatch(r.text, /<style|sender|via-service|<img/);
      assert.equal(r.headers['content-security-policy'], plainForm.headers['content-security-policy']);
      assert.doesNotMatch(r.headers['content-security-policy']!, /style-src/);
    } finally {
      await setBrand(e.h, e.workspaceId, { color: ACCENT, logo: logoPng() });
    }
  });
});
