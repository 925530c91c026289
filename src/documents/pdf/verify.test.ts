// The verifier on files made here and changed the ways people change signed files: a flipped byte, an annotation
// or a page appended in a later revision, another CA, an older B-T seal, no signature, encrypted and broken files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ApiError } from '../../lib/errors.js';
import { ManualClock } from '../../lib/clock.js';
import { loadOrCreatePki, type Pki } from '../../pki/pki.js';
import { tempDir } from '../../pki/testing/tools.js';
import { createValidationSource } from '../../pki/validation-data.js';
import { Update } from './incremental.js';
import { PdfFile } from './pdf-file.js';
import { PdfDict, PdfName, PdfRef, PdfString } from './pdf-syntax.js';
import { sealPdf } from './seal.work.js';
import { verifyInWorker } from './verify.work.js';
import { pdfScratch } from './testing/tools.js';

const clock = new ManualClock(Date.now());
const dirs: string[] = [];

async function pkiIn(): Promise<Pki> {
  const dir = await tempDir();
  dirs.push(dir.path);
  return loadOrCreatePki({ dataDir: dir.path, clock });
}

async function plain(pages = 2): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) doc.addPage().drawText(`Clause ${i + 1}`, { x: 50, y: 700, font });
  return doc.save();
}

const ours = await pkiIn();
const lta = async (pki = ours) =>
  (
    await sealPdf(await plain(), {
      seal: pki.seal,
      tsa: pki.localTsa,
      clock,
      longTerm: { source: createValidationSource({ cas: [pki.ca], clock }), tsaIssuersDer: [pki.caCertDer] },
    })
  ).pdf;
const trust = () => ({ anchorsDer: [ours.caCertDer], crlsDer: [], nowMs: clock.now() });
const codes = (r: { problems: { code: string }[] }) => r.problems.map((p) => p.code);

/** Appends a revision that adds a text annotation to page 1 (what a viewer's "add comment" saves). */
function appendAnnotation(pdf: Uint8Array): Uint8Array {
  const file = new PdfFile(pdf);
  const catalog = file.dict(file.trailer.get('Root'))!;
  const pages = file.dict(catalog.get('Pages'))!;
  const pageRef = (file.resolve(pages.get('Kids')) as PdfRef[])[0]!;
  const page = file.dict(pageRef)!;
  const up = new Update(file);
  const annot = up.ref();
  up.set(
    annot,
    new PdfDict()
      .with('Type', new PdfName('Annot'))
      .with('Subtype', new PdfName('Text'))
      .with('Rect', [100, 100, 120, 120])
      .with('Contents', new PdfString(new Uint8Array(Buffer.from('approved, with changes')))),
  );
  up.set(pageRef, page.with('Annots', [annot]));
  return up.append().pdf;
}

/** Appends a revision with one more page. */
function appendPage(pdf: Uint8Array): Uint8Array {
  const file = new PdfFile(pdf);
  const catalog = file.dict(file.trailer.get('Root'))!;
  const pagesRef = catalog.get('Pages') as PdfRef;
  const pages = file.dict(pagesRef)!;
  const up = new Update(file);
  const page = up.ref();
  up.set(
    page,
    new PdfDict().with('Type', new PdfName('Page')).with('Parent', pagesRef).with('MediaBox', [0, 0, 612, 792]),
  );
  const kids = file.resolve(pages.get('Kids')) as PdfRef[];
  up.set(pagesRef, pages.with('Kids', [...kids, page]).with('Count', kids.length + 1));
  return up.append().pdf;
}

test('a fresh seal is valid B-LTA; the revisions after it are only DSS and a document timestamp', async () => {
  const r = await verifyInWorker(await lta(), trust());
  assert.equal(r.verdict, 'valid', JSON.stringify(r));
  assert.equal(r.pades_level, 'B-LTA');
  assert.equal(r.modified_after_signing, false);
  assert.deepEqual(
    r.signatures.map((s) => s.kind),
    ['signature', 'document_timestamp'],
  );
  assert.ok(
    r.signatures.every((s) => s.intact && s.trusted && s.time_proven),
    JSON.stringify(r.signatures),
  );
  assert.match(r.signatures[0]!.signer!.subject, /CN=Signet Document Seal/);
});

test('one byte flipped inside the signed range: invalid, that signature not intact', async () => {
  const pdf = Buffer.from(await lta());
  pdf[300] ^= 0x04;
  const r = await verifyInWorker(pdf, trust());
  assert.equal(r.verdict, 'invalid');
  assert.equal(r.pades_level, null, 'a broken signature reaches no level');
  assert.equal(r.signatures[0]!.intact, false);
  assert.ok(codes(r.signatures[0]!).includes('digest_mismatch'), JSON.stringify(r.signatures[0]));
});

test('an annotation or a page appended after signing: modified_after_signing, every signature still intact', async (t) => {
  const sealed = await lta();
  const tmp = await pdfScratch('signet-verify-');
  t.after(() => tmp.cleanup());
  for (const [changed, code] of [
    [appendAnnotation(sealed), 'changed_annotation'],
    [appendPage(sealed), 'changed_page'],
  ] as const) {
    tmp.qpdfCheck(changed);
    const r = await verifyInWorker(changed, trust());
    assert.equal(r.modified_after_signing, true, code);
    assert.equal(r.verdict, 'invalid');
    assert.ok(
      r.signatures.every((s) => s.intact),
      'the signatures themselves are untouched',
    );
    assert.ok(codes(r).includes(code), JSON.stringify(r.problems));
  }
});

test('sealed by another CA: intact, not trusted, indeterminate', async () => {
  const r = await verifyInWorker(await lta(await pkiIn()), trust());
  assert.equal(r.verdict, 'indeterminate');
  assert.ok(
    r.signatures.every((s) => s.intact && !s.trusted),
    JSON.stringify(r.signatures),
  );
  assert.ok(codes(r.signatures[0]!).includes('chain_incomplete'), JSON.stringify(r.signatures[0]));
});

test('a seal from before long-term signatures is B-T; a file without a signature has no level', async () => {
  const bt = await sealPdf(await plain(), { seal: ours.seal, tsa: ours.localTsa, clock });
  const r = await verifyInWorker(bt.pdf, trust());
  assert.equal(r.pades_level, 'B-T');
  assert.equal(r.signatures.length, 1);
  const none = await verifyInWorker(await plain(), trust());
  assert.equal(none.pades_level, null);
  assert.equal(none.verdict, 'indeterminate');
  assert.deepEqual(codes(none), ['not_signed']);
});

test('not a PDF, truncated, encrypted: invalid_file, never a crash', async () => {
  const sealed = await lta();
  const dir = await tempDir();
  dirs.push(dir.path);
  const src = path.join(dir.path, 'in.pdf');
  const enc = path.join(dir.path, 'enc.pdf');
  spawnSync('sh', ['-c', `cat > ${src}`], { input: sealed });
  const q = spawnSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', src, enc]);
  assert.equal(q.status, 0, String(q.stderr));
  for (const bytes of [
    new TextEncoder().encode('hello, this is no PDF'),
    sealed.subarray(0, sealed.length - 300),
    sealed.subarray(0, 5000),
    new Uint8Array(readFileSync(enc)),
  ]) {
    await assert.rejects(
      verifyInWorker(bytes, trust()),
      (err: unknown) => err instanceof ApiError && err.code === 'invalid_file',
    );
  }
});
