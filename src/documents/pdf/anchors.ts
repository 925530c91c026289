// Anchor markers in a PDF's text: {{signature:ROLE}}, {{initials:ROLE}}, {{date:ROLE}}, {{text:ROLE}}.
// - The type is lower-case; ROLE is 1-64 of [A-Za-z0-9_-] and is compared case-sensitively with the signers'
//   roles ("Buyer" and "buyer" are two roles). Spaces inside the braces around the type, colon and role are
//   tolerated (pdf.js inserts them at kerning gaps); anything else that merely looks like a marker is ignored.
// - Markers may be split over several text items on a line; items on one baseline are joined before matching.
// - Boxes are in points from the top-left of the page as shown (rotation and CropBox applied by pdf.js's
//   viewport). A marker that is only part of a text item is located by its share of the item's characters, so
//   its box is exact horizontally only when the marker is its own item (the usual case for generated markers).
// - Text extraction runs on a worker thread (pdf.js is slow on big files and must not block the API): the matching
//   is anchors.work.ts. This module, the calling thread's side, loads no PDF library: the scan's entry, the
//   checks of a set of anchors (anchorProblems) and their errors.
import { apiError, ApiError } from '../../lib/errors.js';
import { runPdfTaskOr } from './pool.js';
import type { Anchor, Problem } from './types.js';

export const ANCHOR_TIMEOUT_MS = 30_000;

export type AnchorScan = { anchors: Anchor[]; hasText: boolean; pageCount: number };

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
