// The sending workspace on the audit page and certificate (issue 27), judged by poppler and qpdf: the logo (PNG or
// JPEG) is an image at the top of the first page, in its colours, above the title; the region is a row; a logo
// pdf-lib cannot read is left out and the page still renders; an appended page stays an incremental update.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { appendAuditPage, renderAuditCertificate, type AuditInfo } from './audit-page.js';
import { closePdfWorkers } from './pool.js';
import { makePdf } from './testing/fixtures.js';
import { pdfScratch, type PdfScratch } from './testing/tools.js';
import { logoPng } from '../../testing/brand.js';
import { makeJpeg } from '../../workspaces/testing/images.js';

const SHOTS = '/tmp/shots-brand-applied';
let tmp: PdfScratch;
before(async () => {
  tmp = await pdfScratch('signet-audit-face-');
  fs.mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await tmp.cleanup();
  await closePdfWorkers();
});

const info = (face: AuditInfo['face']): AuditInfo => ({
  locale: 'en',
  documentId: 'doc_01BRAND',
  title: 'Master services agreement',
  originalSha256: 'a'.repeat(64),
  signers: [
    {
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      role: 'client',
      ip: '203.0.113.9',
      userAgent: 'UA',
      sentAt: '2024-06-01T10:00:00Z',
      viewedAt: '2024-06-01T11:00:00Z',
      signedAt: '2024-06-01T12:00:00Z',
    },
  ],
  completedAt: '2024-06-01T12:05:00Z',
  face,
});

/** Page `page` at 60 dpi in colour: a PNG kept for looking at, and the pixels (PPM) for counting. */
function renderColour(pdf: Uint8Array, name: string, page = 1) {
  const file = tmp.save(pdf);
  const args = ['-r', '60', '-f', String(page), '-l', String(page)];
  execFileSync('pdftoppm', [...args, '-png', '-singlefile', file, path.join(SHOTS, name)]);
  const ppm = execFileSync('pdftoppm', [...args, file]);
  const m = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 40).toString('latin1'))!;
  return { width: +m[1]!, height: +m[2]!, px: ppm.subarray(m[0].length) };
}

/** Pixels in the top `rows` rows that match `pick` (r, g, b). */
function count(img: ReturnType<typeof renderColour>, rows: number, pick: (r: number, g: number, b: number) => boolean) {
  let n = 0;
  for (let i = 0; i < img.width * Math.min(rows, img.height); i++)
    if (pick(img.px[i * 3]!, img.px[i * 3 + 1]!, img.px[i * 3 + 2]!)) n++;
  return n;
}
const red = (r: number, g: number, b: number) => r > 150 && g < 100 && b < 110;

test('the certificate: the logo heads page 1 in its own colours, the title below it, the region a row', async () => {
  const plain = await renderAuditCertificate({ ...info(null), events: [] });
  const branded = await renderAuditCertificate({
    ...info({ logo: { bytes: logoPng(), type: 'image/png' }, region: 'eu-central' }),
    events: [],
  });
  for (const pdf of [plain, branded]) tmp.qpdfCheck(pdf);
  assert.equal(imageCount(plain), 0);
  assert.equal(imageCount(branded), 1, 'one image: the logo');

  // 60 dpi: the page's top margin is 45 px, the logo 40 pt (about 33 px) high below it.
  const a = renderColour(plain, 'certificate-plain');
  const b = renderColour(branded, 'certificate-branded');
  assert.equal(count(a, 100, red), 0, 'no logo colours without a logo');
  assert.ok(count(b, 90, red) > 300, `the logo's red is drawn at the top (${count(b, 90, red)} px)`);

  const text = tmp.pdfText(branded, { page: 1 });
  assert.match(text, /Hosting region\s+eu-central/);
  assert.doesNotMatch(tmp.pdfText(plain, { page: 1 }), /Hosting region/);
  // The title is still there, below the logo.
  assert.match(text, /^Audit trail/m);
});

test('a JPEG logo is drawn too; a logo pdf-lib cannot read is left out and the page still renders', async () => {
  const jpeg = await renderAuditCertificate({
    ...info({ logo: { bytes: makeJpeg(120, 40), type: 'image/jpeg' }, region: null }),
    events: [],
  });
  tmp.qpdfCheck(jpeg);
  assert.equal(imageCount(jpeg), 1);
  assert.doesNotMatch(tmp.pdfText(jpeg, { page: 1 }), /Hosting region/);
  renderColour(jpeg, 'certificate-jpeg');

  const broken = await renderAuditCertificate({
    ...info({ logo: { bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]), type: 'image/png' }, region: 'x' }),
    events: [],
  });
  tmp.qpdfCheck(broken);
  assert.equal(imageCount(broken), 0);
  assert.match(tmp.pdfText(broken, { page: 1 }), /Hosting region\s+x/);
});

test('appended incrementally (documents that already hold signatures): the input stays a prefix', async () => {
  const original = await makePdf({ pages: 1, text: [['Body']] });
  const out = await appendAuditPage(
    original,
    info({ logo: { bytes: logoPng(), type: 'image/png' }, region: 'eu-central' }),
    { incremental: true },
  );
  assert.ok(Buffer.from(out.subarray(0, original.length)).equals(Buffer.from(original)), 'the input is a prefix');
  tmp.qpdfCheck(out);
  assert.equal(imageCount(out), 1);
  const img = renderColour(out, 'audit-page-incremental', 2);
  assert.ok(count(img, 90, red) > 300, 'the logo heads the appended page');
  assert.match(tmp.pdfText(out, { page: 2 }), /Hosting region\s+eu-central/);
});

/** How many images `pdfimages -list` finds (a PNG's alpha channel is its soft mask, not counted). */
function imageCount(pdf: Uint8Array): number {
  const out = execFileSync('pdfimages', ['-list', tmp.save(pdf)], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .slice(2)
    .filter((row) => row.trim().split(/\s+/)[2] === 'image').length;
}
