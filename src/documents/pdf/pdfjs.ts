// pdf.js for worker threads only: loaded on first use so the API thread never pays for it, configured for
// untrusted input (no eval of font programs, no font faces, no system fonts, no network). It is loaded with
// require() (Node 20.19+ loads ES modules so), which tsx's ES-module hooks do not see: through them, the 3.3 MB of
// pdf.js cost each worker about 300 MB of resident memory in transforms and source maps; this way about 50 MB.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

type PdfjsModule = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let mod: PdfjsModule | null = null;
const require = createRequire(import.meta.url);
const root = path.dirname(require.resolve('pdfjs-dist/package.json'));

function load(): PdfjsModule {
  if (mod) return mod;
  mod = require('pdfjs-dist/legacy/build/pdf.mjs') as PdfjsModule;
  // pdf.js runs its parser in this thread ("fake worker"); handing it the handler keeps it from import()ing it.
  (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = require('pdfjs-dist/legacy/build/pdf.worker.mjs');
  return mod;
}

export async function openWithPdfjs(bytes: Uint8Array): Promise<PDFDocumentProxy> {
  const { getDocument } = load();
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
