// Test helpers that check PDFs with external tools (poppler-utils, qpdf) rather than our own parsing. The PDF is
// written to a temp dir for each call. A missing or failing tool fails the test; nothing is skipped.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../../pki/testing/tools.js';
import type { Box } from '../types.js';

/** Resolution `render` uses; `darkest` turns points into pixels with it. */
export const RENDER_DPI = 50;

export type PdfTextOptions = {
  /** Only this page (1-based); default all, pages separated by form feeds. */
  page?: number;
  /** `-layout`: keep the physical layout. */
  layout?: boolean;
  /** `-raw`: content-stream order. */
  raw?: boolean;
};

/** A grey page image, one byte a pixel, rows from the top. */
export type PageImage = { width: number; height: number; px: Buffer };

export type PdfScratch = {
  /** The temp dir. */
  path: string;
  /** Writes `pdf` to the dir, as `name` or a new numbered file, and returns the file's path. */
  save(pdf: Uint8Array, name?: string): string;
  /** pdftotext's output. */
  pdfText(pdf: Uint8Array, opts?: PdfTextOptions): string;
  /** Asserts `qpdf --check` exits 0 and returns its stdout. */
  qpdfCheck(pdf: Uint8Array): string;
  /** Page `page` as viewers show it (CropBox), rendered by pdftoppm in grey (PGM: no PNG decoder needed). */
  render(pdf: Uint8Array, page?: number): PageImage;
  /** stdout of `cmd <file>` (pdffonts, pdfinfo); throws when the tool fails. */
  poppler(cmd: string, pdf: Uint8Array): string;
  cleanup(): Promise<void>;
};

/** A temp dir (created by the PKI tests' `tempDir`) and the tool wrappers writing into it. */
export async function pdfScratch(prefix: string): Promise<PdfScratch> {
  const tmp = await tempDir(prefix);
  let n = 0;
  const save = (pdf: Uint8Array, name = `f${++n}.pdf`): string => {
    const file = path.join(tmp.path, name);
    writeFileSync(file, pdf);
    return file;
  };
  return {
    path: tmp.path,
    save,
    pdfText: (pdf, o = {}) =>
      execFileSync(
        'pdftotext',
        [
          ...(o.page ? ['-f', String(o.page), '-l', String(o.page)] : []),
          ...(o.layout ? ['-layout'] : []),
          ...(o.raw ? ['-raw'] : []),
          save(pdf),
          '-',
        ],
        { encoding: 'utf8' },
      ),
    qpdfCheck(pdf) {
      const r = spawnSync('qpdf', ['--check', save(pdf)], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      return r.stdout;
    },
    render(pdf, page = 1) {
      const out = execFileSync('pdftoppm', [
        '-r',
        String(RENDER_DPI),
        '-gray',
        '-cropbox',
        '-f',
        String(page),
        '-l',
        String(page),
        save(pdf),
      ]);
      const m = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(out.subarray(0, 40).toString('latin1'));
      assert.ok(m, 'pdftoppm did not write a PGM');
      return { width: +m[1], height: +m[2], px: out.subarray(m[0].length) };
    },
    poppler: (cmd, pdf) => execFileSync(cmd, [save(pdf)], { encoding: 'utf8' }),
    cleanup: tmp.cleanup,
  };
}

/** Darkest grey value inside a top-left box in points (1 px inset to skip anti-aliased edges). */
export function darkest(img: PageImage, b: Box): number {
  const k = RENDER_DPI / 72;
  let min = 255;
  for (let y = Math.ceil(b.y * k) + 1; y < Math.floor((b.y + b.height) * k) - 1; y++) {
    for (let x = Math.ceil(b.x * k) + 1; x < Math.floor((b.x + b.width) * k) - 1; x++)
      min = Math.min(min, img.px[y * img.width + x]);
  }
  return min;
}
