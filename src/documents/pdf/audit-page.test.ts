import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendAuditPage, type AuditInfo, type AuditSigner, renderAuditCertificate } from './audit-page.js';
import { inspectPdf } from './ingest.js';
import { closePdfWorkers } from './pool.js';
import { makePdf } from './testing/fixtures.js';
import { pdfScratch, type PdfScratch } from './testing/tools.js';

let tmp: PdfScratch;
before(async () => {
  tmp = await pdfScratch('signet-audit-');
});
after(async () => {
  await tmp.cleanup();
  await closePdfWorkers();
});

/**
 * Text per page; raw (content-stream) order by default, so wrapped values stay on consecutive lines. Raw order
 * scrambles right-to-left words on a line that mixes directions ("1. דוד כהן (r)"), so the script test reads
 * in poppler's default reading order instead.
 */
const pagesText = (pdf: Uint8Array, raw = true): string[] => tmp.pdfText(pdf, { raw }).split('\f').slice(0, -1);
const qpdfCheck = (pdf: Uint8Array) => {
  tmp.qpdfCheck(pdf);
  assert.doesNotMatch(Buffer.from(pdf).toString('latin1'), /\/ObjStm/);
};
/** Wrapped values come back with line breaks (and a mono hash may break anywhere): compare without whitespace. */
const squash = (s: string) => s.replace(/\s+/g, '');

const UA =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15';

const signer = (i: number, o: Partial<AuditSigner> = {}): AuditSigner => ({
  name: `Signer ${i}`,
  email: `signer${i}@example.com`,
  role: `role${i}`,
  ip: `203.0.113.${i}`,
  userAgent: `${UA} #${i}`,
  sentAt: `2024-06-01T10:00:${String(i % 60).padStart(2, '0')}Z`,
  viewedAt: `2024-06-01T11:00:${String(i % 60).padStart(2, '0')}Z`,
  signedAt: `2024-06-01T12:00:${String(i % 60).padStart(2, '0')}Z`,
  ...o,
});

let original: Uint8Array;
let sha: string;
before(async () => {
  original = await makePdf({ pages: 2, text: [['Page one body'], ['Page two body']] });
  sha = createHash('sha256').update(original).digest('hex');
});

const info = (signers: AuditSigner[], o: Partial<AuditInfo> = {}): AuditInfo => ({
  locale: 'en',
  documentId: 'doc_01HZX3',
  title: 'Master services agreement',
  originalSha256: sha,
  signers,
  completedAt: '2024-06-01T12:05:00Z',
  ...o,
});

test('an appended audit page lists every signer value and the original SHA-256, after the untouched pages', async () => {
  const signers = [signer(1), signer(2, { ip: '2001:db8::1', userAgent: null, viewedAt: null })];
  const out = await appendAuditPage(original, info(signers));
  const pages = pagesText(out);
  assert.equal(pages.length, 3);
  assert.match(pages[0], /Page one body/);
  assert.match(pages[1], /Page two body/);
  const audit = pages[2];
  assert.match(audit, /Audit trail/);
  assert.match(audit, /Master services agreement/);
  assert.match(audit, /doc_01HZX3/);
  assert.ok(squash(audit).includes(sha), 'original SHA-256 printed in full');
  assert.match(audit, /2024-06-01T12:05:00Z/);
  assert.match(audit, /Signers \(2\)/);
  for (const s of signers) {
    for (const v of [s.name, s.email, s.role, s.ip!, s.sentAt!, s.signedAt!])
      assert.ok(audit.includes(v), `${v} missing`);
  }
  assert.ok(squash(audit).includes(squash(signers[0].userAgent!)), 'the long user agent is printed in full (wrapped)');
  assert.ok(audit.includes(signers[0].viewedAt!), 'audit.includes(signers[0].viewedAt!)');
  assert.match(audit, /page 1 of 1/);
  qpdfCheck(out);
});

test('missing values print as a dash and an unfinished document says so', async () => {
  const out = await appendAuditPage(
    original,
    info([signer(1, { ip: null, userAgent: null, sentAt: null, viewedAt: null, signedAt: null })], {
      completedAt: null,
    }),
  );
  const audit = pagesText(out)[2];
  assert.match(audit, /not completed/);
  assert.match(audit, /IP address —/);
  assert.match(audit, /Signed —/);
});

test('20 signers paginate: every signer on some audit page, "page i of n" on each, nothing lost', async () => {
  const signers = Array.from({ length: 20 }, (_, i) => signer(i + 1));
  const out = await appendAuditPage(original, info(signers));
  const pages = pagesText(out).slice(2);
  assert.ok(pages.length >= 3, `${pages.length} audit pages`);
  pages.forEach((p, i) => assert.match(p, new RegExp(`doc_01HZX3 — page ${i + 1} of ${pages.length}`)));
  const all = pages.join('\n');
  for (const s of signers) {
    assert.ok(all.includes(`${s.email}`), s.email);
    assert.ok(squash(all).includes(squash(s.userAgent!)), `${s.name}'s user agent`);
    assert.ok(all.includes(`203.0.113.${s.name.split(' ')[1]}`), `${s.name}'s IP`);
  }
  // A signer's block is kept together: its numbered heading and its "Signed" row are on the same page.
  for (const [i, s] of signers.entries()) {
    const p = pages.find((t) => t.includes(`${i + 1}. ${s.name} (${s.role})`));
    assert.ok(p?.includes(s.signedAt!), `${s.name}'s block split over pages`);
  }
  assert.equal((await inspectPdf(out)).pageCount, 2 + pages.length);
  qpdfCheck(out);
});

test('non-Latin names, e-mails and titles render as text', async () => {
  const names = [
    'Zoë Ångström',
    'Łukasz Żółć',
    'Ελένη Παπαδοπούλου',
    'Дмитрий Шостакович',
    'Արամ Խաչատրյան',
    'გიორგი ბერიძე',
    'דוד כהן',
    'محمد علي',
  ];
  const signers = names.map((name, i) => signer(i + 1, { name, email: `ü${i}@bücher.example` }));
  const out = await appendAuditPage(original, info(signers, { title: 'Договор — Σύμβαση' }));
  const all = pagesText(out, false)
    .slice(2)
    .join('\n')
    .replace(/[\u202a-\u202e]/g, '');
  assert.match(all, /Договор — Σύμβαση/);
  for (const s of signers) {
    assert.ok(all.includes(s.name), `${s.name} missing`);
    assert.ok(all.includes(s.email), `${s.email} missing`);
  }
});

test('a small or rotated last page: audit pages are Letter, or the shown size when that is big enough', async () => {
  const small = await appendAuditPage(await makePdf({ size: [300, 300] }), info([signer(1)]));
  assert.deepEqual((await inspectPdf(small)).pages.at(-1), { width: 612, height: 792, rotation: 0 });
  const rotated = await appendAuditPage(await makePdf({ rotate: 90 }), info([signer(1)]));
  assert.deepEqual((await inspectPdf(rotated)).pages.at(-1), { width: 792, height: 612, rotation: 0 });
  const a4 = await appendAuditPage(await makePdf({ size: [595.28, 841.89] }), info([signer(1)]));
  assert.deepEqual((await inspectPdf(a4)).pages.at(-1), { width: 595.28, height: 841.89, rotation: 0 });
});

test('renderAuditCertificate: a standalone PDF with the audit and every event, paginated', async () => {
  const events = Array.from({ length: 80 }, (_, i) => ({
    at: `2024-06-01T10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`,
    event: i % 2 ? 'request.viewed' : 'request.sent',
    actor: i % 3 ? `signer${i}@example.com` : null,
    ip: i % 4 ? `198.51.100.${i}` : null,
    detail: i === 7 ? `reminder ${'x'.repeat(300)}` : null,
  }));
  const pdf = await renderAuditCertificate({ ...info([signer(1), signer(2)]), events });
  const info1 = await inspectPdf(pdf);
  assert.ok(info1.pageCount >= 3, `${info1.pageCount} pages`);
  const pages = pagesText(pdf);
  const all = pages.join('\n');
  assert.match(pages[0], /^Audit trail/);
  assert.match(all, /Events \(80\)/);
  assert.ok(squash(all).includes(sha), 'squash(all).includes(sha)');
  for (const e of events) {
    assert.ok(all.includes(e.at), `event at ${e.at}`);
    if (e.actor) assert.ok(all.includes(e.actor), e.actor);
    if (e.ip) assert.ok(all.includes(`IP ${e.ip}`), e.ip);
  }
  assert.ok(squash(all).includes('x'.repeat(300)), 'a long detail is printed in full');
  pages.forEach((p, i) => assert.match(p, new RegExp(`page ${i + 1} of ${pages.length}`)));
  const meta = tmp.poppler('pdfinfo', pdf);
  assert.match(meta, /Title:\s+Audit trail — Master services agreement/);
  assert.match(meta, /Creator:\s+Signet/);
  qpdfCheck(pdf);
});

test('renderAuditCertificate with no events still has its header and the signers', async () => {
  const pdf = await renderAuditCertificate({ ...info([signer(1)]), events: [] });
  const all = pagesText(pdf).join('\n');
  assert.match(all, /Events \(0\)/);
  assert.match(all, /signer1@example\.com/);
});

test("the labels are in the document's language, from the catalogue; names in any script stay intact", async () => {
  const names = ['Ελένη Παπαδοπούλου', 'Дмитрий Иванов', 'José Müller-Łukasiewicz'];
  const signers = names.map((name, i) => signer(i + 1, { name, signedAt: null }));
  const events = [
    { at: '2024-06-01T10:00:00Z', event: 'signing_request.viewed', actor: 'signer:a@example.com', ip: '198.51.100.7' },
  ];
  const words = {
    de: [
      'Prüfprotokoll',
      'Dokument-ID',
      'nicht abgeschlossen',
      'Unterzeichnende (3)',
      'IP-Adresse',
      'Unterschrieben —',
      'Ereignisse (1)',
      'Seite 1 von 1',
    ],
    fr: [
      'Piste d’audit',
      'ID du document',
      'non finalisé',
      'Signataires (3)',
      'Adresse IP',
      'Signature —',
      'Événements (1)',
      'page 1 sur 1',
    ],
    es: [
      'Pista de auditoría',
      'ID del documento',
      'no completado',
      'Firmantes (3)',
      'Dirección IP',
      'Firmado —',
      'Eventos (1)',
      'página 1 de 1',
    ],
  };
  for (const [locale, want] of Object.entries(words) as [keyof typeof words, string[]][]) {
    const pdf = await renderAuditCertificate({ ...info(signers, { locale, completedAt: null }), events });
    const text = pagesText(pdf).join('\n');
    for (const w of [...want, ...names, 'IP 198.51.100.7', 'signing_request.viewed'])
      assert.ok(text.includes(w), `${locale}: "${w}" missing`);
    assert.doesNotMatch(text, /Audit trail|Signers \(|Events \(|User agent|not completed|page 1 of/, locale);
    assert.match(tmp.poppler('pdfinfo', pdf), new RegExp(`Title:\\s+${want[0]} — Master services agreement`));
    qpdfCheck(pdf);
  }
  // The page appended to the sealed PDF says the same.
  const appended = pagesText(await appendAuditPage(original, info(signers, { locale: 'de' })))[2]!;
  for (const w of ['Prüfprotokoll', 'Dokument-ID', 'Unterzeichnende (3)', 'User-Agent', 'Seite 1 von 1', ...names])
    assert.ok(appended.includes(w), `appended: "${w}" missing`);
});

test('names in every script of issue 22 are on the certificate as text; a character no font has is recorded', async (t) => {
  const names = ['王小明 Дмитрий Ünal', '山田 太郎', '김민준', 'محمد علي', 'שרה כהן', 'प्रिया शर्मा', 'Tamil தமிழ்'];
  const signers = names.map((name, i) => signer(i + 1, { name }));
  const pdf = await renderAuditCertificate({ ...info(signers, { title: 'Договор 合同 agreement' }), events: [] });
  t.diagnostic(`certificate: ${tmp.save(pdf, 'scripts.pdf')}`);
  for (const raw of [true, false]) {
    const text = pagesText(pdf, raw)
      .join('\n')
      .replace(/[\u202a-\u202e]/g, '');
    for (const n of [...names, 'Договор 合同 agreement']) assert.ok(text.includes(n), `${raw}: "${n}" missing`);
    assert.doesNotMatch(text, /\?\?/, 'no question marks');
  }
  // The Tamil name is drawn as boxes; the certificate lists its code points under it, in the document's language.
  const text = pagesText(pdf).join('\n');
  assert.match(text, /Characters no embedded font has \(drawn as □\): U\+0BA4 U\+0BAE U\+0BBF U\+0BB4 U\+0BCD/);
  const de = pagesText(await renderAuditCertificate({ ...info(signers, { locale: 'de' }), events: [] })).join('\n');
  assert.match(de, /Zeichen, die keine eingebettete Schrift enthält \(als □ gezeichnet\): U\+0BA4/);
  qpdfCheck(pdf);
});

const QUALIFIED = {
  provider: 'Example Trust Services',
  subject:
    'CN=Signer 1, GIVENNAME=Maximiliane Alexandra, SURNAME=von Hohenzollern-Sigmaringen, SERIALNUMBER=PNODE-1234567890, C=DE',
  issuer: 'CN=Example Qualified CA 2024, O=Example Trust Services GmbH, C=DE',
  serial: '4f1e9a07c3d2b58e6a90f1c2d3e4b5a6978812ab',
};

test('a qualified signer: the provider and the certificate (subject, issuer, serial) are in their block', async () => {
  const signers = [signer(1, { qualified: QUALIFIED }), signer(2)];
  const audit = pagesText(await appendAuditPage(original, info(signers)))[2]!;
  const flat = squash(audit);
  for (const v of [QUALIFIED.provider, QUALIFIED.subject, QUALIFIED.issuer, QUALIFIED.serial])
    assert.ok(flat.includes(squash(v)), `${v} missing`);
  for (const label of ['Qualified electronic signature', 'Certificate', 'Issued by', 'Serial number'])
    assert.equal(flat.split(squash(label)).length - 1, 1, `"${label}" printed once, for signer 1 only`);
  // The values sit in signer 1's block: after its heading, before signer 2's.
  const block = flat.slice(flat.indexOf('1.Signer1'), flat.indexOf('2.Signer2'));
  assert.ok(block.includes(squash(QUALIFIED.provider)), 'provider in signer 1 block');
  assert.ok(block.includes(QUALIFIED.serial), 'serial in signer 1 block');
});

test('a signer without a qualified signature: nothing new is printed', async () => {
  const absent = pagesText(await appendAuditPage(original, info([signer(1)])))[2]!;
  const none = pagesText(await appendAuditPage(original, info([signer(1, { qualified: null })])))[2]!;
  assert.equal(none, absent);
  assert.doesNotMatch(absent, /Qualified|Certificate|Issued by|Serial number|Example Trust/);
});

test("the qualified signature's labels are in the document's language; a certificate in any script renders", async () => {
  const q = {
    ...QUALIFIED,
    subject: 'CN=山田 太郎, CN=Дмитрий Иванов, C=JP',
    issuer: 'CN=Ελληνική Αρχή Πιστοποίησης, C=GR',
  };
  const pdf = await renderAuditCertificate({ ...info([signer(1, { qualified: q })], { locale: 'de' }), events: [] });
  const text = pagesText(pdf, false)
    .join('\n')
    .replace(/[\u202a-\u202e]/g, '');
  const flat = squash(text);
  for (const w of ['Qualifizierte elektronische Signatur', 'Zertifikat', 'Ausgestellt von', 'Seriennummer'])
    assert.ok(flat.includes(squash(w)), `de: "${w}" missing`);
  for (const v of [q.provider, q.subject, q.issuer, q.serial]) assert.ok(flat.includes(squash(v)), `${v} missing`);
  assert.doesNotMatch(text, /Qualified electronic|Issued by|Serial number|Characters no embedded font/);
  qpdfCheck(pdf);
});
