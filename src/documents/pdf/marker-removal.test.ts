// Markers leave the page content (marker-removal.ts), through the real placement entries (worker pool): the text
// layer loses them, everything else renders exactly as before, and what cannot be removed is still masked.
// Renders are kept as PNGs in the diagnostic's folder, to be looked at.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ManualClock } from '../../lib/clock.js';
import { loadOrCreatePki } from '../../pki/pki.js';
import { findAnchors } from './anchors.js';
import { preparePdf } from './placement.js';
import { closePdfWorkers } from './pool.js';
import { sealPdf } from './seal.work.js';
import { placeTemplate } from './template-placement.js';
import { contentPdf, type ContentTools, type FontKey } from './testing/content-fixtures.js';
import { makePdf } from './testing/fixtures.js';
import { pdfScratch, type PdfScratch } from './testing/tools.js';
import type { Box } from './types.js';

let tmp: PdfScratch;
const shots = path.join(tmpdir(), 'signet-test-output', 'marker-removal');
before(async () => {
  tmp = await pdfScratch('signet-markers-');
  mkdirSync(shots, { recursive: true });
});
after(async () => {
  await tmp.cleanup();
  await closePdfWorkers();
});

type Img = { width: number; height: number; px: Buffer; dpi: number };

/** Page 1 in grey at `dpi`; also kept as `<name>.png` in the screenshots folder. */
function render(pdf: Uint8Array, name: string, dpi = 100): Img {
  const file = tmp.save(pdf, `${name}.pdf`);
  execFileSync('pdftoppm', [
    '-r',
    String(dpi),
    '-png',
    '-singlefile',
    '-f',
    '1',
    '-l',
    '1',
    file,
    path.join(shots, name),
  ]);
  const out = execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-f', '1', '-l', '1', file], {
    maxBuffer: 1 << 28,
  });
  const m = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(out.subarray(0, 40).toString('latin1'));
  assert.ok(m, 'pdftoppm did not write a PGM');
  return { width: +m[1], height: +m[2], px: out.subarray(m[0].length), dpi };
}

const inside = (img: Img, boxes: Box[], x: number, y: number) => {
  const k = img.dpi / 72;
  return boxes.some((b) => x >= b.x * k && x < (b.x + b.width) * k && y >= b.y * k && y < (b.y + b.height) * k);
};

const grow = (b: Box, d: number): Box => ({ x: b.x - d, y: b.y - d, width: b.width + 2 * d, height: b.height + 2 * d });

/** Where two renders differ outside `boxes` (top-left points), as "x,y" pixels. */
function changedOutside(a: Img, b: Img, boxes: Box[]): string[] {
  const where: string[] = [];
  for (let y = 0; y < a.height; y++)
    for (let x = 0; x < a.width; x++)
      if (a.px[y * a.width + x] !== b.px[y * a.width + x] && !inside(a, boxes, x, y)) where.push(`${x},${y}`);
  return where;
}

/** Darkest pixel inside `box`. */
function darkestIn(img: Img, box: Box): number {
  let min = 255;
  for (let y = 0; y < img.height; y++)
    for (let x = 0; x < img.width; x++) if (inside(img, [box], x, y)) min = Math.min(min, img.px[y * img.width + x]);
  return min;
}

const PAGE_H = 792;
type Piece = string | { marker: string } | number;
/** One line of hand-written text: its show operators' style, and where its marker lies (top-left box). */
type Line = { font: FontKey; y: number; pieces: Piece[]; size?: number; tc?: number; tw?: number; as?: 'TJ' | 'Tj' };

const literal = (codes: number[]) =>
  '(' +
  codes
    .map((c) =>
      c < 32 || c > 126 || '()\\'.includes(String.fromCharCode(c))
        ? '\\' + c.toString(8).padStart(3, '0')
        : String.fromCharCode(c),
    )
    .join('') +
  ')';

/** The content of a line (hex strings for F2, literal ones otherwise) and its marker's box, from the fonts' widths. */
function line(t: ContentTools, l: Line): { content: string; marker: Box } {
  const size = l.size ?? 12;
  const [tc, tw] = [l.tc ?? 0, l.tw ?? 0];
  let x = 72;
  let x0 = NaN;
  let x1 = NaN;
  const shows: string[] = [];
  for (const p of l.pieces) {
    if (typeof p === 'number') {
      x -= (p / 1000) * size;
      shows.push(String(p));
      continue;
    }
    const text = typeof p === 'string' ? p : p.marker;
    if (typeof p !== 'string') x0 = x;
    for (const ch of text) x += t.width(l.font, ch, size) + tc + (ch === ' ' && l.font !== 'F2' ? tw : 0);
    if (typeof p !== 'string') x1 = x;
    const hex = t.hex(l.font, text);
    shows.push(l.font === 'F2' ? hex : literal([...Buffer.from(hex.slice(1, -1), 'hex')]));
  }
  const ops = l.as === 'Tj' ? shows.map((s) => `${s} Tj`).join(' ') : `[${shows.join(' ')}] TJ`;
  const content = `BT /${l.font} ${size} Tf ${tc} Tc ${tw} Tw 72 ${l.y} Td ${ops} ET`;
  return { content, marker: { x: x0, y: PAGE_H - l.y - 0.95 * size, width: x1 - x0, height: 1.2 * size } };
}

async function linesPdf(
  lines: Line[],
  wrap = (c: string) => ({ page: c }),
): Promise<{ pdf: Uint8Array; boxes: Box[] }> {
  const boxes: Box[] = [];
  const pdf = await contentPdf((t) => {
    const parts = lines.map((l) => line(t, l));
    boxes.push(...parts.map((p) => p.marker));
    return wrap(parts.map((p) => p.content).join('\n'));
  });
  return { pdf, boxes };
}

function assertRemoved(before: Uint8Array, placed: Uint8Array, boxes: Box[], name: string, kept: RegExp[]) {
  const text = tmp.pdfText(placed);
  assert.doesNotMatch(text, /\{\{|\[\[/, `${name}: no marker text is left:\n${text}`);
  for (const k of kept) assert.match(text, k, `${name}: the text around the markers stays`);
  assert.match(tmp.qpdfCheck(placed), /No syntax or stream encoding errors found/);
  const [a, b] = [render(before, `${name}-before`), render(placed, `${name}-after`)];
  // Inside each marker's box (a hair in from its edges: neighbours' anti-aliasing) nothing is left; outside it
  // (a pixel out) nothing changed.
  for (const box of boxes.map((x) => grow(x, -0.5))) {
    assert.ok(darkestIn(a, box) < 128, `${name}: the marker is drawn before`);
    assert.equal(darkestIn(b, box), 255, `${name}: nothing is drawn where the marker was (${JSON.stringify(box)})`);
  }
  const changed = changedOutside(
    a,
    b,
    boxes.map((x) => grow(x, 0.75)),
  );
  assert.deepEqual(changed.slice(0, 10), [], `${name}: every other pixel is as before`);
}

test('pdf-lib drawText: own lines, a marker ending a run, a marker split over runs in two fonts', async (t) => {
  const pdf = await makePdf({
    text: [['Visible body text', 'Signature: {{signature:Buyer}}', { text: '{{date:Buyer}} after', split: [3, 9] }]],
  });
  const anchors = await findAnchors(pdf);
  const r = await preparePdf(pdf, { mode: 'anchors', roles: ['Buyer'] });
  // pdf.js's boxes are exact at a run's ends; the inline one starts where Helvetica's widths put it.
  const helv = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
  const boxes = anchors.map((a) => a.box);
  const start = 72 + helv.widthOfTextAtSize('Signature: ', 12);
  boxes[0] = { ...boxes[0], x: start, width: boxes[0].x + boxes[0].width - start };
  assertRemoved(pdf, r.pdf, boxes, 'pdf-lib', [/Visible body text/, /Signature:/, /after/]);
  t.diagnostic(`renders: ${shots}`);
});

test('hand-written TJ arrays: literal and hex strings, kerning, Tc and Tw, markers inside runs, three kinds of font', async () => {
  const lines: Line[] = [
    { font: 'F1', y: 700, pieces: ['Sign ', -20, { marker: '{{signature:A}}' }, 50, ' here'] },
    { font: 'F3', y: 670, tc: 0.3, pieces: ['Before ', { marker: '{{initials:A}}' }, ' after'] },
    { font: 'F2', y: 640, pieces: ['Имя: ', { marker: '{{date:A}}' }, -100, ' конец'] },
    { font: 'F1', y: 610, tw: 4, pieces: ['x ', { marker: '{{ text : A }}' }, ' y'] },
    { font: 'F1', y: 580, as: 'Tj', pieces: [{ marker: '{{signature:B}}' }, 'tail'] },
    { font: 'F2', y: 550, as: 'Tj', pieces: ['Подпись: ', { marker: '{{initials:B}}' }] },
  ];
  const { pdf, boxes } = await linesPdf(lines);
  const r = await preparePdf(pdf, { mode: 'anchors', roles: ['A', 'B'] });
  assert.equal(r.fields.length, 6, JSON.stringify(r.fields));
  assertRemoved(pdf, r.pdf, boxes, 'hand-written', [/Sign/, /here/, /Before/, /Имя:/, /конец/, /tail/, /Подпись:/]);
});

test('a marker in a Form XObject is removed from this page’s own copy of the form', async () => {
  const l: Line = { font: 'F1', y: 700, pieces: ['In a form: ', { marker: '{{signature:A}}' }, ' done'] };
  const { pdf, boxes } = await linesPdf([l], (c) => ({ page: 'q /X1 Do Q', forms: { X1: c } }));
  const r = await preparePdf(pdf, { mode: 'anchors', roles: ['A'] });
  assertRemoved(pdf, r.pdf, boxes, 'form', [/In a form:/, /done/]);
});

test('template anchors: literal markers split over runs and inside a run are removed; the fields keep their boxes', async () => {
  const lines: Line[] = [
    { font: 'F1', y: 700, pieces: ['Name: ', { marker: '{{customer_name}}' }] },
    { font: 'F2', y: 670, pieces: ['Hier: ', { marker: '[[SIGN_HERE]]' }, ' ok'] },
  ];
  const { pdf, boxes } = await linesPdf(lines);
  const fields = [
    { key: 'name', type: 'text' as const, anchor: '{{customer_name}}' },
    { key: 'sig', type: 'signature' as const, anchor: '[[SIGN_HERE]]' },
  ];
  const r = await placeTemplate(pdf, fields);
  assert.deepEqual(
    r.fields.map((f) => f.key),
    ['name', 'sig'],
  );
  assertRemoved(pdf, r.pdf, boxes, 'template', [/Name:/, /Hier:/, /ok/]);
});

// The mask's inner edge is pdf.js's item split by Helvetica's widths (anchors.work.ts): exact for Helvetica-like
// faces, whatever the letters beside the marker.
test('fallback: a marker in a nested form is masked, with no sliver of it at 300 dpi', async () => {
  const lines: Line[] = [
    { font: 'F1', y: 700, pieces: ['WWWW: ', { marker: '{{signature:A}}' }, ' iiii'] },
    { font: 'F3', y: 660, pieces: ['mmm: ', { marker: '{{initials:A}}' }, ' lll'] },
  ];
  const { pdf, boxes } = await linesPdf(lines, (c) => ({ page: 'q /X2 Do Q', forms: { X2: '/X1 Do', X1: c } }));
  const r = await preparePdf(pdf, { mode: 'anchors', roles: ['A'] });
  assert.match(tmp.qpdfCheck(r.pdf), /No syntax or stream encoding errors found/);
  const img = render(r.pdf, 'nested-after', 300);
  // The marker's own extent, shrunk by a hair so anti-aliasing of its neighbours does not count.
  for (const m of boxes)
    assert.equal(darkestIn(img, grow(m, -0.5)), 255, `no sliver of the marker shows (${JSON.stringify(m)})`);
  assert.match(tmp.pdfText(r.pdf), /WWWW:/);
});

test('the sealed file of a placed PDF has no marker text, and keeps the text beside it', async () => {
  const pdf = await makePdf({ text: [['Terms', 'Signature: {{signature:signer1}}', '{{date:signer1}}']] });
  const placed = await preparePdf(pdf, { mode: 'anchors', roles: ['signer1'] });
  const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);
  const pki = await loadOrCreatePki({ dataDir: path.join(tmp.path, 'pki'), clock });
  const { pdf: sealed } = await sealPdf(placed.pdf, { seal: pki.seal, tsa: pki.localTsa, clock });
  assert.match(tmp.qpdfCheck(sealed), /No syntax or stream encoding errors found/);
  const text = tmp.pdfText(sealed);
  assert.match(text, /Terms/);
  assert.match(text, /Signature:/);
  assert.doesNotMatch(text, /\{\{|signer1/, 'no marker in the sealed text');
  render(sealed, 'sealed');
});
