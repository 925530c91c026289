// The signer page's files (page/), and pdf.js's browser build with the folders it fetches from. Signing owns the PDF
// viewer (signer.css, pdf-view.js, pdf.js), which the review page reuses by name through the app's assets.
import { besideModule, packageFile, type AssetTable } from '../web/assets.js';

const pdfjs = (rel: string) => packageFile(import.meta.url, 'pdfjs-dist', rel);

export const SIGNER_ASSETS = {
  'signer.js': { file: besideModule(import.meta.url, 'page/signer.js') },
  // The fields area's behaviour (checks, errors, previews over the PDF), imported by signer.js.
  'signer-fields.js': { file: besideModule(import.meta.url, 'page/signer-fields.js') },
  'signer.css': { file: besideModule(import.meta.url, 'page/signer.css') },
  // The PDF preview the signer and review pages import (through its versioned URL, given in each page's data).
  'pdf-view.js': { file: besideModule(import.meta.url, 'page/pdf-view.js') },
  'pdf.min.mjs': { file: pdfjs('build/pdf.min.mjs') },
  'pdf.worker.min.mjs': { file: pdfjs('build/pdf.worker.min.mjs') },
  // Fonts for non-embedded standard fonts, and CJK cmaps.
  'pdfjs/standard_fonts/': { folder: pdfjs('standard_fonts') },
  'pdfjs/cmaps/': { folder: pdfjs('cmaps') },
} satisfies AssetTable;
