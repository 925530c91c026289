// pdf-lib for the PDF modules, from its single-file build. The package's ES build is ~300 modules, which the tsx
// loader in a worker thread takes seconds to load; the bundle loads in about 0.1 s. Same API and types.
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';

type PdfLib = typeof import('pdf-lib');
const lib = createRequire(import.meta.url)('pdf-lib/dist/pdf-lib.min.js') as PdfLib;

// pdf-lib compresses the streams it makes (font subsets, ToUnicode maps, replaced page contents) with pako, a
// zlib in JavaScript about 4× slower than Node's: it was the largest part of appending a signature page (issue 25).
// The same FlateDecode streams, made by Node's zlib; the compressed bytes differ, what they hold does not.
lib.PDFContext.prototype.flateStream = function (this: import('pdf-lib').PDFContext, contents, dict = {}) {
  const bytes = typeof contents === 'string' ? Buffer.from(contents, 'latin1') : contents;
  return this.stream(deflateSync(bytes), { ...dict, Filter: 'FlateDecode' });
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
