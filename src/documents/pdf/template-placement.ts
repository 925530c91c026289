// Template placement: turns a template's PDF and its field definitions into the published PDF and each field's
// final box. Guarantees:
// - a field is placed either by `anchor`, a literal marker text ({{customer_name}}, [[SIGN_HERE]], 1–100
//   characters), or by `page` + `box` (points from the top-left of the page as shown, as in coordinates mode);
// - anchors are found the way signing-request anchors are (pdf.js lines, anchors.work.ts), matched literally and
//   case-sensitively, with any whitespace allowed between the anchor's characters (pdf.js inserts spaces at
//   kerning gaps; whitespace inside the anchor itself is treated the same way). Each anchor must occur exactly
//   once in the whole PDF, and no two fields may name the same anchor;
// - an anchored field's box grows from the marker's box as in anchors mode (anchorBox, ANCHOR_FIELD_MIN by type),
//   and the marker is removed as there (clearMarkers: deleted from the content, masked only as a fallback);
// - problems are ApiErrors, the first one found: the checks that need no PDF for every field, then each field in
//   input order against the PDF. Any other failure is 422 placement_failed, as is a time-out or a crash;
// - fields come back in input order, boxes rounded to 0.01 pt; the PDF is saved WITHOUT object streams (the seal
//   needs a classic xref table).
// This module is the calling thread's side and loads no PDF library; the checks and the work on the PDF are
// template-placement.work.ts, in a worker thread.
import { placementFailure, PREPARE_TIMEOUT_MS } from './placement.js';
import { runPdfTaskOr } from './pool.js';
import type { Box, FieldType } from './types.js';

export type TemplatePlacementField = { key: string; type: FieldType; anchor?: string; page?: number; box?: Box };
/** A field's final place: page and box in points from the top-left of the page as shown. */
export type PlacedField = { key: string; page: number } & Box;
export type PlacedTemplate = { pdf: Uint8Array; pageCount: number; fields: PlacedField[] };

export function placeTemplate(
  bytes: Uint8Array,
  fields: TemplatePlacementField[],
  opts: { timeoutMs?: number } = {},
): Promise<PlacedTemplate> {
  return runPdfTaskOr<PlacedTemplate>(
    { op: 'place_template', bytes, fields },
    opts.timeoutMs ?? PREPARE_TIMEOUT_MS,
    placementFailure,
  );
}

/** A `{{…}}` marker found in a template's PDF (whitespace dropped, as anchors match); `count`: its occurrences. */
export type TemplateMarker = { text: string; page: number; box: Box; count: number };

/** Every distinct `{{…}}` marker in the PDF, in page then reading order (what a new template offers as fields). */
export function findTemplateMarkers(
  bytes: Uint8Array,
  opts: { timeoutMs?: number } = {},
): Promise<{ markers: TemplateMarker[]; hasText: boolean; pageCount: number }> {
  return runPdfTaskOr({ op: 'template_markers', bytes }, opts.timeoutMs ?? PREPARE_TIMEOUT_MS, placementFailure);
}
