// Worker side of anchors.ts (whose header states the marker rules implemented here): pdf.js text with positions,
// joined into lines, matched against the marker pattern; also the line reader template-placement.work.ts searches.
// Runs only in a PDF worker thread: imported by pdf.worker.ts and other *.work.ts (and tests), never by a
// main-thread module.
import { apiError } from '../../lib/errors.js';
import type { AnchorScan } from './anchors.js';
import { round2 } from './geometry.js';
import { StandardFontEmbedder, StandardFonts } from './pdf-lib.js';
import { openWithPdfjs } from './pdfjs.js';
import type { Anchor, Box, FieldType } from './types.js';

const MARKER = /\{\{\s*(signature|initials|date|text)\s*:\s*([A-Za-z0-9_-]{1,64})\s*\}\}/g;
/** One marker's own pattern (global): its type and role (only [A-Za-z0-9_-]), with MARKER's whitespace. */
export const markerPattern = (a: Pick<Anchor, 'type' | 'role'>): RegExp =>
  new RegExp(`\\{\\{\\s*${a.type}\\s*:\\s*${a.role}\\s*\\}\\}`, 'gu');
// Joins items on a line but keeps a marker from spanning a wide gap (two columns).
const GAP_BREAK = '\u0000';

type Item = { str: string; transform: number[]; width: number; height: number; hasEOL: boolean };
type Segment = { item: Item; start: number; end: number };
type Line = { text: string; segs: Segment[] };
type Viewport = { convertToViewportPoint(x: number, y: number): number[] };

/** Worker side of scanAnchors: pdf.js text with positions, joined into lines, matched against MARKER. */
export async function scanAnchorsInWorker(bytes: Uint8Array): Promise<AnchorScan> {
  const anchors: Anchor[] = [];
  const { hasText, pageCount } = await readTextLinesInWorker(bytes, (text, page, locate) => {
    for (const m of text.matchAll(MARKER)) {
      const box = locate(m.index!, m.index! + m[0].length);
      if (box) anchors.push({ type: m[1] as FieldType, role: m[2], page, box });
    }
  });
  return { anchors, hasText, pageCount };
}

/**
 * Worker side: the PDF's text, page by page, as lines (joinLines) in reading order. `visit` gets each line's text
 * and `locate`, the box (top-left, shown page) of the line's characters [from, to), null if none are drawn.
 * A PDF pdf.js cannot open is invalid_file (reason damaged).
 */
export async function readTextLinesInWorker(
  bytes: Uint8Array,
  visit: (text: string, page: number, locate: (from: number, to: number) => Box | null) => void,
): Promise<{ hasText: boolean; pageCount: number }> {
  let doc;
  try {
    doc = await openWithPdfjs(bytes);
  } catch {
    throw apiError('invalid_file', { message: 'The PDF could not be parsed.', meta: { reason: 'damaged' } });
  }
  try {
    let hasText = false;
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const viewport = page.getViewport({ scale: 1 });
      const content = await page.getTextContent();
      const items = content.items.filter((i) => 'str' in i) as Item[];
      if (!hasText) hasText = items.some((i) => /\S/u.test(i.str));
      for (const line of joinLines(items)) visit(line.text, n, (from, to) => boxOf(line, from, to, viewport));
      page.cleanup();
    }
    return { hasText, pageCount: doc.numPages };
  } finally {
    await doc.destroy().catch(() => {});
  }
}

function geometry(item: Item) {
  const [a, b, c, d, e, f] = item.transform;
  const len = Math.hypot(a, b) || 1;
  const size = Math.hypot(c, d) || item.height || 1;
  return {
    dx: a / len,
    dy: b / len,
    ox: e,
    oy: f,
    size,
    width: item.width > 0 ? item.width : item.str.length * size * 0.5,
  };
}

export function joinLines(items: Item[]): Line[] {
  const lines: Line[] = [];
  let cur: Line | null = null;
  let last: ReturnType<typeof geometry> | null = null;
  for (const item of items) {
    if (item.str !== '') {
      const g = geometry(item);
      if (cur && last) {
        const same = g.dx * last.dx + g.dy * last.dy > 0.99;
        const rx = g.ox - (last.ox + last.dx * last.width);
        const ry = g.oy - (last.oy + last.dy * last.width);
        const along = rx * g.dx + ry * g.dy;
        const across = Math.abs(rx * -g.dy + ry * g.dx);
        if (!same || across > 0.5 * Math.max(g.size, last.size) || along < -g.size) {
          lines.push(cur);
          cur = null;
        } else if (along > 3 * g.size) {
          cur.text += GAP_BREAK;
        }
      }
      cur ??= { text: '', segs: [] };
      if (g.width > 3 * g.size && item.str.trim() === '') {
        // pdf.js fills a wide gap on a line with one space item spanning it: that is still a column gap.
        cur.text += GAP_BREAK;
      } else {
        cur.segs.push({ item, start: cur.text.length, end: cur.text.length + item.str.length });
        cur.text += item.str;
      }
      last = g;
    }
    if (item.hasEOL && cur) {
      lines.push(cur);
      cur = null;
      last = null;
    }
  }
  if (cur) lines.push(cur);
  return lines;
}

let helvetica: { widthOfTextAtSize(text: string, size: number): number } | undefined;
const widths = new Map<string, number>();

/** The advance of str[from, to) in Helvetica's units (1000 to the em); characters it lacks count as 556. */
function advance(str: string, from: number, to: number): number {
  helvetica ??= StandardFontEmbedder.for(StandardFonts.Helvetica as never);
  let w = 0;
  for (let i = from; i < to; i++) {
    let cw = widths.get(str[i]);
    if (cw === undefined) {
      try {
        cw = helvetica.widthOfTextAtSize(str[i], 1000);
      } catch {
        cw = 556;
      }
      widths.set(str[i], cw);
    }
    w += cw;
  }
  return w || 1;
}

/** Bounding box (top-left, shown page) of characters [from, to) of a line, descenders and accents included. */
function boxOf(line: Line, from: number, to: number, viewport: Viewport): Box | null {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const s of line.segs) {
    const a = Math.max(from, s.start) - s.start;
    const b = Math.min(to, s.end) - s.start;
    if (b <= a) continue;
    const g = geometry(s.item);
    const str = s.item.str;
    // Where characters [a, b) lie in the item: by Helvetica's widths, a fair guess for most text faces (equal
    // shares put the edge of an inline marker a glyph off beside wide or narrow letters).
    const total = advance(str, 0, str.length);
    const t0 = (g.width * advance(str, 0, a)) / total;
    const t1 = (g.width * advance(str, 0, b)) / total;
    for (const t of [t0, t1]) {
      for (const up of [-0.25 * g.size, 0.95 * g.size]) {
        const [vx, vy] = viewport.convertToViewportPoint(g.ox + g.dx * t - g.dy * up, g.oy + g.dy * t + g.dx * up);
        x0 = Math.min(x0, vx);
        y0 = Math.min(y0, vy);
        x1 = Math.max(x1, vx);
        y1 = Math.max(y1, vy);
      }
    }
  }
  if (!Number.isFinite(x0 + y0 + x1 + y1)) return null;
  return { x: round2(x0), y: round2(y0), width: round2(x1 - x0), height: round2(y1 - y0) };
}
