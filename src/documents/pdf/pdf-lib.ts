// pdf-lib for the PDF modules, from its single-file build. The package's ES build is ~300 modules, which the tsx
// loader in a worker thread takes seconds to load; the bundle loads in about 0.1 s. Same API and types.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';

type PdfLib = typeof import('pdf-lib');
const lib = createRequire(import.meta.url)('pdf-lib/dist/pdf-lib.min.js') as PdfLib;

// pdf-lib compresses the streams it makes (font subsets, ToUnicode maps, replaced page contents) with pako, a
// zlib in JavaScript about 4× slower than Node's: it was the largest part of appending a signature page (issue 25).
// The same FlateDecode streams, made by Node's zlib; the compressed bytes differ, what they hold does not. Large
// inputs (font subsets: the same title's subset in every signature page) are compressed once per worker, by hash.
const DEFLATED_KEPT = 100;
const deflated = new Map<string, Uint8Array>();
function deflate(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength < 4096) return deflateSync(bytes);
  const key = createHash('sha256').update(bytes).digest('base64');
  let out = deflated.get(key);
  if (!out) {
    out = deflateSync(bytes);
    if (deflated.size >= DEFLATED_KEPT) deflated.delete(deflated.keys().next().value!);
    deflated.set(key, out);
  }
  return out;
}
lib.PDFContext.prototype.flateStream = function (this: import('pdf-lib').PDFContext, contents, dict = {}) {
  const bytes = typeof contents === 'string' ? Buffer.from(contents, 'latin1') : contents;
  return this.stream(deflate(bytes), { ...dict, Filter: 'FlateDecode' });
};

export const {
  PDFDocument,
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFOperator,
  PDFRawStream,
  PDFRef,
  TextRenderingMode,
  decodePDFRawStream,
  StandardFontEmbedder,
  StandardFonts,
  rgb,
  beginText,
  concatTransformationMatrix,
  endText,
  popGraphicsState,
  pushGraphicsState,
  setFillingColor,
  setFontAndSize,
  setLineWidth,
  setStrokingColor,
  setTextMatrix,
  setTextRenderingMode,
  showText,
} = lib;

export type PDFDocument = import('pdf-lib').PDFDocument;
export type PDFArray = import('pdf-lib').PDFArray;
export type PDFDict = import('pdf-lib').PDFDict;
export type PDFHexString = import('pdf-lib').PDFHexString;
export type PDFName = import('pdf-lib').PDFName;
export type PDFOperator = import('pdf-lib').PDFOperator;
export type PDFRef = import('pdf-lib').PDFRef;
export type PDFNumber = import('pdf-lib').PDFNumber;
export type PDFRawStream = import('pdf-lib').PDFRawStream;
export type { Color, PDFFont, PDFImage, PDFObject, PDFPage } from 'pdf-lib';
