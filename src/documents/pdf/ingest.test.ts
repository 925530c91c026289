import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { PDFDocument } from 'pdf-lib';
import { ApiError } from '../../lib/errors.js';
import { MAX_FILE_BYTES, MAX_PDF_PAGES } from '../../limits.js';
import { checkPdfEnvelope, inspectPdf } from './ingest.js';
import { closePdfWorkers } from './pool.js';
import { makeBigPdf, makeGarbage, makePdf } from './testing/fixtures.js';

after(() => closePdfWorkers());

/** Asserts that `p` rejects with an ApiError of `code` (and meta.reason `reason` when given); returns it. */
async function refused(p: Promise<unknown>, code: string, reason?: string): Promise<ApiError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  if (reason !== undefined) assert.equal(err.meta?.reason, reason, err.message);
  return err;
}

test('a plain PDF: page count, shown sizes, rotation, sha256 of the uploaded bytes, no form', async () => {
  const pdf = await makePdf({ pages: 3, size: [595.28, 841.89], text: [['one'], ['two'], ['three']] });
  const r = await inspectPdf(pdf);
  assert.equal(r.pageCount, 3);
  assert.deepEqual(r.pages, Array(3).fill({ width: 595.28, height: 841.89, rotation: 0 }));
  assert.equal(r.sha256, createHash('sha256').update(pdf).digest('hex'));
  assert.match(r.sha256, /^[0-9a-f]{64}$/);
  assert.equal(r.hasForm, false);
  assert.equal(r.hasSignatures, false);
});

test('rotated pages report their shown size (90 and 270 swap width and height) and the normalised angle', async () => {
  const pdf = await makePdf({ pages: 4, size: [612, 792], rotate: [0, 90, 180, 270] });
  const r = await inspectPdf(pdf);
  assert.deepEqual(r.pages, [
    { width: 612, height: 792, rotation: 0 },
    { width: 792, height: 612, rotation: 90 },
    { width: 612, height: 792, rotation: 180 },
    { width: 792, height: 612, rotation: 270 },
  ]);
});

test('a CropBox sets the reported page size', async () => {
  const r = await inspectPdf(await makePdf({ cropBox: [50, 60, 400, 500] }));
  assert.deepEqual(r.pages, [{ width: 400, height: 500, rotation: 0 }]);
});

test('object-stream PDFs are accepted too', async () => {
  const r = await inspectPdf(await makePdf({ pages: 2, objectStreams: true }));
  assert.equal(r.pageCount, 2);
});

test('a form is reported (hasForm) without signatures; a signed signature field sets hasSignatures', async () => {
  const form = await inspectPdf(await makePdf({ withForm: true }));
  assert.equal(form.hasForm, true);
  assert.equal(form.hasSignatures, false);
  const signed = await inspectPdf(await makePdf({ withSignatureField: true }));
  assert.equal(signed.hasForm, true);
  assert.equal(signed.hasSignatures, true);
});

test('zero bytes: invalid_file, reason empty', async () => {
  await refused(inspectPdf(new Uint8Array(0)), 'invalid_file', 'empty');
});

test('garbage and junk before %PDF-: invalid_file, reason not_pdf', async () => {
  await refused(inspectPdf(makeGarbage(4096, 3)), 'invalid_file', 'not_pdf');
  await refused(inspectPdf(new TextEncoder().encode('%PD')), 'invalid_file', 'not_pdf');
  const pdf = await makePdf();
  const junk = new Uint8Array(pdf.byteLength + 1);
  junk[0] = 0x20;
  junk.set(pdf, 1);
  await refused(inspectPdf(junk), 'invalid_file', 'not_pdf');
});

test('a truncated valid PDF: invalid_file, reason truncated', async () => {
  const pdf = await makePdf({ pages: 2, text: [['hello'], ['world']] });
  await refused(inspectPdf(pdf.subarray(0, Math.floor(pdf.byteLength / 2))), 'invalid_file', 'truncated');
  await refused(inspectPdf(pdf.subarray(0, pdf.byteLength - 8)), 'invalid_file', 'truncated');
});

test('a PDF that keeps %%EOF but lost its body: invalid_file, reason damaged', async () => {
  const pdf = await makePdf({ text: [['hello']] });
  const head = pdf.subarray(0, 200);
  const tail = new TextEncoder().encode('\ntrailer\n<</Root 99 0 R>>\nstartxref\n0\n%%EOF\n');
  const broken = new Uint8Array([...head, ...tail]);
  await refused(inspectPdf(broken), 'invalid_file', 'damaged');
});

test('an encrypted PDF (empty user password): invalid_file, reason encrypted', async () => {
  await refused(inspectPdf(await makePdf({ encrypt: true, text: [['secret']] })), 'invalid_file', 'encrypted');
});

test('a PDF with no pages: invalid_file, reason no_pages', async () => {
  const doc = await PDFDocument.create();
  const bytes = await doc.save({ useObjectStreams: false, addDefaultPage: false });
  assert.match(Buffer.from(bytes).toString('latin1'), /\/Count 0/);
  await refused(inspectPdf(bytes), 'invalid_file', 'no_pages');
});

test(`exactly ${MAX_PDF_PAGES} pages pass; ${MAX_PDF_PAGES + 1} are too_many_pages with page_count and max_pages`, async () => {
  assert.equal((await inspectPdf(await makePdf({ pages: MAX_PDF_PAGES }))).pageCount, MAX_PDF_PAGES);
  const err = await refused(inspectPdf(await makePdf({ pages: MAX_PDF_PAGES + 1 })), 'invalid_file', 'too_many_pages');
  assert.equal(err.meta?.page_count, MAX_PDF_PAGES + 1);
  assert.equal(err.meta?.max_pages, MAX_PDF_PAGES);
});

test('a 1000-page PDF is refused quickly', async () => {
  const pdf = await makePdf({ pages: 1000 });
  await inspectPdf(await makePdf()); // the worker pool is warm: time the refusal alone
  const t0 = performance.now();
  const err = await refused(inspectPdf(pdf), 'invalid_file', 'too_many_pages');
  const ms = performance.now() - t0;
  console.log(`# 1000-page PDF (${pdf.byteLength} bytes) refused in ${ms.toFixed(0)} ms`);
  assert.equal(err.meta?.page_count, 1000);
  assert.ok(ms < 15_000, `took ${ms} ms`);
});

test('maxPages is configurable', async () => {
  const err = await refused(inspectPdf(await makePdf({ pages: 3 }), { maxPages: 2 }), 'invalid_file', 'too_many_pages');
  assert.equal(err.meta?.max_pages, 2);
});

test('over 25 MB: 413 file_too_large with max_bytes and size, refused before any parsing', async () => {
  const big = await makeBigPdf(MAX_FILE_BYTES + 10);
  assert.ok(big.byteLength > MAX_FILE_BYTES, 'big.byteLength > MAX_FILE_BYTES');
  const t0 = performance.now();
  const err = await refused(inspectPdf(big), 'file_too_large');
  assert.ok(performance.now() - t0 < 1000, 'performance.now() - t0 < 1000');
  assert.equal(err.status, 413);
  assert.deepEqual(err.meta, { max_bytes: MAX_FILE_BYTES, size: big.byteLength });
  // The limit is on the bytes, not the kind of file: the same check holds for garbage.
  assert.throws(
    () => checkPdfEnvelope(new Uint8Array(11), 10),
    (e: unknown) => e instanceof ApiError && e.code === 'file_too_large',
  );
});

test('a PDF just under the limit is accepted', async () => {
  const big = await makeBigPdf(MAX_FILE_BYTES - 64 * 1024);
  assert.ok(big.byteLength <= MAX_FILE_BYTES, `${big.byteLength}`);
  assert.equal((await inspectPdf(big)).pageCount, 1);
});

test('property: mutated or truncated valid PDFs either pass or are invalid_file, never another error or a hang', async () => {
  const base = await makePdf({
    pages: 2,
    text: [['{{signature:Buyer}}', 'Some body text'], ['page two']],
    withForm: true,
  });
  const RUN_BOUND_MS = 20_000;
  const outcomes = { ok: 0, refused: new Map<string, number>() };
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ at: fc.nat({ max: base.byteLength - 1 }), byte: fc.integer({ min: 0, max: 255 }) }), {
        minLength: 1,
        maxLength: 12,
      }),
      // A cut either just truncates, or keeps the file's last 32 bytes (startxref, %%EOF) so parsing is reached.
      fc.option(fc.record({ at: fc.nat({ max: base.byteLength }), keepTail: fc.boolean() }), { freq: 3 }),
      async (flips, cut) => {
        let bytes = base.slice();
        for (const f of flips) bytes[f.at] = f.byte;
        if (cut) {
          const head = bytes.subarray(0, cut.at);
          bytes = cut.keepTail ? new Uint8Array([...head, ...base.subarray(-32)]) : head;
        }
        let timer: NodeJS.Timeout | undefined;
        const hang = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`inspectPdf did not settle in ${RUN_BOUND_MS} ms`)), RUN_BOUND_MS);
        });
        try {
          const r = await Promise.race([inspectPdf(bytes, { timeoutMs: 5_000 }), hang]);
          assert.ok(r.pageCount >= 1, 'r.pageCount >= 1');
          outcomes.ok++;
        } catch (err) {
          assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
          assert.equal(err.code, 'invalid_file', err.message);
          const reason = String(err.meta?.reason);
          outcomes.refused.set(reason, (outcomes.refused.get(reason) ?? 0) + 1);
        } finally {
          clearTimeout(timer);
        }
      },
    ),
    { numRuns: 60 },
  );
  console.log(`# fuzz outcomes: ok ${outcomes.ok}, refused ${JSON.stringify(Object.fromEntries(outcomes.refused))}`);
});
