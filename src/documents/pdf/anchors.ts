// Anchor markers in a PDF's text: {{signature:ROLE}}, {{initials:ROLE}}, {{date:ROLE}}, {{text:ROLE}}.
// - The type is lower-case; ROLE is 1-64 of [A-Za-z0-9_-] and is compared case-sensitively with the signers'
//   roles ("Buyer" and "buyer" are two roles). Spaces inside the braces around the type, colon and role are
//   tolerated (pdf.js inserts them at kerning gaps); anything else that merely looks like a marker is ignored.
// - Markers may be split over several text items on a line; items on one baseline are joined before matching.
// - Boxes are in points from the top-left of the page as shown (rotation and CropBox applied by pdf.js's
//   viewport). A marker that is only part of a text item is located by its share of the item's characters, so
//   its box is exact horizontally only when the marker is its own item (the usual case for generated markers).
// - Text extraction runs on a worker thread (pdf.js is slow on big files and must not block the API).
import { apiError, ApiError } from '../../lib/errors.js';
import { round2 } from './geometry.js';
import { openWithPdfjs } from './pdfjs.js';
import { runPdfTaskOr } from './pool.js';
import type { Anchor, Box, FieldType, Problem } from './types.js';

export const ANCHOR_TIMEOUT_MS = 30_000;

export type AnchorScan = { anchors: Anchor[]; hasText: boolean; pageCount: number };

const MARKER = /\{\{\s*(signature|initials|date|text)\s*:\s*([A-Za-z0-9_-]{1,64})\s*\}\}/g;
// Joins items on a line but keeps a marker from spanning a wide gap (two columns).
const GAP_BREAK = '\u0000';

export function anchorFailure(): ApiError {
  return apiError('placement_failed', { message: 'Reading the PDF text for anchors failed.' });
}

/** All markers, in page order then reading order. */
export async function findAnchors(bytes: Uint8Array): Promise<Anchor[]> {
  return (await scanAnchors(bytes)).anchors;
}

export function scanAnchors(bytes: Uint8Array, timeoutMs = ANCHOR_TIMEOUT_MS): Promise<AnchorScan> {
  return runPdfTaskOr<AnchorScan>({ op: 'anchors', bytes }, timeoutMs, anchorFailure);
}

/**
 * Everything wrong with a set of anchors for these signer roles, in a stable order: no_anchors_found (alone),
 * then unknown_role, duplicate_anchor and signer_has_no_anchor. Without `roles` only the checks that need no
 * roles run (preview before the signers are known).
 */
export function anchorProblems(
  anchors: Anchor[],
  roles?: readonly string[],
  opts: { hasText?: boolean } = {},
): Problem[] {
  if (anchors.length === 0) {
    const reason = opts.hasText === undefined ? undefined : opts.hasText ? 'no_markers' : 'no_text';
    const message =
      reason === 'no_text'
        ? 'The PDF has no extractable text (a scan?), so it cannot carry anchors.'
        : 'The PDF has no {{signature:ROLE}} markers.';
    return [problem('no_anchors_found', message, reason ? { reason } : undefined)];
  }
  const out: Problem[] = [];
  if (roles) {
    const known = new Set(roles);
    const reported = new Set<string>();
    for (const a of anchors) {
      if (known.has(a.role) || reported.has(a.role)) continue;
      reported.add(a.role);
      out.push(
        problem('unknown_role', `An anchor on page ${a.page} names role "${a.role}", which no signer has.`, {
          role: a.role,
        }),
      );
    }
  }
  const seen = new Map<string, number>();
  for (const a of anchors) {
    const key = `${a.type}\u0000${a.role}\u0000${a.page}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    if (n === 2) {
      out.push(
        problem('duplicate_anchor', `{{${a.type}:${a.role}}} appears more than once on page ${a.page}.`, {
          role: a.role,
          page: a.page,
          type: a.type,
        }),
      );
    }
  }
  if (roles) {
    for (const role of new Set(roles)) {
      if (!anchors.some((a) => a.role === role && a.type === 'signature')) {
        out.push(
          problem('signer_has_no_anchor', `No {{signature:${role}}} marker for signer role "${role}".`, { role }),
        );
      }
    }
  }
  return out;
}

/** Throws the first of anchorProblems() as its ApiError. */
export function validateAnchors(anchors: Anchor[], roles: readonly string[], opts: { hasText?: boolean } = {}): void {
  const [first] = anchorProblems(anchors, roles, opts);
  if (first) throw problemError(first);
}

export function problemError(p: Problem): ApiError {
  const name = p.code as 'unknown_role' | 'duplicate_anchor' | 'signer_has_no_anchor' | 'no_anchors_found';
  return apiError(name, { message: p.message, meta: p.meta });
}

/** For POST /v1/placement/preview: every anchor with its box, and every problem (not just the first). */
export async function previewPlacement(
  bytes: Uint8Array,
  roles?: readonly string[],
): Promise<{ anchors: Anchor[]; problems: Problem[] }> {
  const scan = await scanAnchors(bytes);
  return { anchors: scan.anchors, problems: anchorProblems(scan.anchors, roles, { hasText: scan.hasText }) };
}

const problem = (code: string, message: string, meta?: Record<string, unknown>): Problem =>
  meta ? { code, message, meta } : { code, message };

// ---- worker side ----

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
    const n = s.item.str.length;
    const t0 = (g.width * a) / n;
    const t1 = (g.width * b) / n;
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
