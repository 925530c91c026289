// pdf.js for worker threads only: loaded on first use so the API thread never pays for it, configured for
// untrusted input (no eval of font programs, no font faces, no system fonts, no network).
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

type PdfjsModule = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let mod: Promise<PdfjsModule> | null = null;
const root = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

export async function openWithPdfjs(bytes: Uint8Array): Promise<PDFDocumentProxy> {
  mod ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  const { getDocument } = await mod;
  const task = getDocument({
    // pdf.js may take ownership of the buffer; callers keep theirs.
    data: bytes.slice(),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    enableXfa: false,
    verbosity: 0,
    cMapUrl: path.join(root, 'cmaps') + path.sep,
    cMapPacked: true,
    standardFontDataUrl: path.join(root, 'standard_fonts') + path.sep,
  });
  return task.promise;
}

export type { PDFDocumentProxy };
