// Worker side of ingest.ts (whose header states the guarantees): the parse, with pdf-lib and then pdf.js. Runs
// only in a PDF worker thread: imported by pdf.worker.ts (and tests), never by a main-thread module.
import { createHash } from 'node:crypto';
import { PDFArray, PDFDict, PDFDocument, PDFName, type PDFObject, PDFRef } from './pdf-lib.js';
import { ApiError } from '../../lib/errors.js';
import { pageGeometry, round2 } from './geometry.js';
import { invalidFile, type PdfInspection } from './ingest.js';
import { openWithPdfjs } from './pdfjs.js';
import type { PageInfo } from './types.js';

/** Worker side of inspectPdf. */
export async function inspectInWorker(bytes: Uint8Array, maxPages: number): Promise<PdfInspection> {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false });
  } catch {
    throw invalidFile('damaged', 'The PDF could not be parsed.');
  }
  if (doc.isEncrypted) throw invalidFile('encrypted', 'The PDF is encrypted; upload an unprotected copy.');

  let pageCount: number;
  let pages: PageInfo[];
  try {
    pageCount = doc.getPageCount();
    if (pageCount === 0) throw invalidFile('no_pages', 'The PDF has no pages.');
    if (pageCount > maxPages) {
      throw invalidFile('too_many_pages', `The PDF has ${pageCount} pages; the limit is ${maxPages}.`, {
        page_count: pageCount,
        max_pages: maxPages,
      });
    }
    pages = doc.getPages().map((p) => {
      const g = pageGeometry(p);
      return { width: round2(g.width), height: round2(g.height), rotation: g.rotation };
    });
  } catch (err) {
    if (isApiError(err)) throw err;
    throw invalidFile('damaged', 'The PDF page tree could not be read.');
  }

  let js;
  try {
    js = await openWithPdfjs(bytes);
  } catch (err) {
    if ((err as { name?: string })?.name === 'PasswordException')
      throw invalidFile('encrypted', 'The PDF is encrypted.');
    throw invalidFile('damaged', 'The PDF could not be parsed.');
  }
  try {
    if (js.numPages !== pageCount) throw invalidFile('damaged', 'The PDF page tree is inconsistent.');
    for (let i = 1; i <= pageCount; i++) await js.getPage(i);
  } catch (err) {
    if (isApiError(err)) throw err;
    throw invalidFile('damaged', 'A page of the PDF could not be read.');
  } finally {
    await js.destroy().catch(() => {});
  }

  const { hasForm, hasSignatures } = formSummary(doc);
  return { pageCount, pages, sha256, hasForm, hasSignatures };
}

const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;

/** Walks the AcroForm field tree by hand (pdf-lib's form API throws on odd but harmless forms). */
function formSummary(doc: PDFDocument): { hasForm: boolean; hasSignatures: boolean } {
  try {
    const acro = doc.catalog.lookupMaybe(PDFName.of('AcroForm'), PDFDict);
    const fields = acro?.lookupMaybe(PDFName.of('Fields'), PDFArray);
    if (!fields || fields.size() === 0) return { hasForm: false, hasSignatures: false };
    let hasSignatures = false;
    const seen = new Set<PDFObject>();
    const visit = (obj: PDFObject | undefined, inheritedSig: boolean, depth: number): void => {
      if (hasSignatures || !obj || depth > 32) return;
      const dict = obj instanceof PDFRef ? doc.context.lookup(obj) : obj;
      if (!(dict instanceof PDFDict) || seen.has(dict)) return;
      seen.add(dict);
      const ft = dict.get(PDFName.of('FT'));
      const isSig = ft ? ft === PDFName.of('Sig') : inheritedSig;
      if (isSig && dict.has(PDFName.of('V'))) hasSignatures = true;
      const kids = dict.lookupMaybe(PDFName.of('Kids'), PDFArray);
      if (kids) for (let i = 0; i < kids.size(); i++) visit(kids.get(i), isSig, depth + 1);
    };
    for (let i = 0; i < fields.size(); i++) visit(fields.get(i), false, 0);
    return { hasForm: true, hasSignatures };
  } catch {
    return { hasForm: true, hasSignatures: false };
  }
}
