// Placement: turns an ingested PDF and a placement choice into the PDF signers see plus its fields.
// Guarantees:
// - fields are boxes in points from the top-left of the page as shown (the API's system), ids f1, f2, … in order;
// - anchors mode: markers are deleted from the page content (marker-removal.ts: only the marker's glyphs, the
//   rest of the page draws as before), so they are gone from the text layer too (copy-paste, pdftotext, screen
//   readers). A marker that cannot be removed so (an encoding or widths we cannot read, a nested form) is masked
//   by an opaque white rectangle over its box instead, and stays extractable;
// - every role must be claimed by a signer (unknown_role) and every signer needs a signature field
//   (signer_has_no_anchor, meta.role, also for coordinates mode);
// - user mistakes are ApiErrors; any other failure while changing the PDF is 422 placement_failed;
// - the output is saved by pdf-lib WITHOUT object streams (classic xref table): the seal adds an incremental
//   update that needs it. Keep useObjectStreams: false on every save here.
// This module is the calling thread's side (the entry, the shapes, the failure mapping) and loads no PDF library;
// the checks of the request and the work on the PDF are placement.work.ts, in a worker thread.
import type { Locale } from '../../i18n/i18n.js';
import { apiError, type ApiError } from '../../lib/errors.js';
import { runPdfTaskOr } from './pool.js';
import type { Field, FieldType } from './types.js';

export const PREPARE_TIMEOUT_MS = 30_000;
/** Smallest box, in points, that still holds a legible stamp. */
export const MIN_FIELD_SIZE = 5;

export type Signer = { role: string; name: string; email: string };
export type CoordinateField = {
  role: string;
  type: FieldType;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  label?: string;
  required?: boolean;
};

export type PlacementInput =
  | { mode: 'anchors'; roles: string[] }
  // The request's resolved locale (its own or the workspace's default); absent: DEFAULT_LOCALE.
  | { mode: 'auto_append'; signers: Signer[]; locale?: Locale }
  | { mode: 'coordinates'; fields: CoordinateField[]; roles: string[] };

export type PreparedPdf = { pdf: Uint8Array; fields: Field[]; pageCount: number };

/** Minimum field size per type in anchors mode; the marker box grows to this, its bottom-left corner fixed. */
export const ANCHOR_FIELD_MIN: Record<FieldType, { width: number; height: number }> = {
  signature: { width: 150, height: 40 },
  initials: { width: 60, height: 30 },
  date: { width: 100, height: 20 },
  text: { width: 150, height: 20 },
  // Not anchor types of signing requests; template fields of these types are placed as text (templates/fields.ts).
  checkbox: { width: 20, height: 20 },
  number: { width: 150, height: 20 },
  email: { width: 150, height: 20 },
  enum: { width: 150, height: 20 },
};

export const placementFailed = (why: string) =>
  apiError('placement_failed', { message: `PDF processing failed: ${why}.` });

/** What a placement task's time-out or crash becomes (runPdfTaskOr's onFailure). */
export const placementFailure = (kind: 'timeout' | 'crash'): ApiError =>
  placementFailed(kind === 'timeout' ? 'it took too long' : 'the PDF could not be processed');

export async function preparePdf(
  bytes: Uint8Array,
  input: PlacementInput,
  opts: { timeoutMs?: number } = {},
): Promise<PreparedPdf> {
  return runPdfTaskOr<PreparedPdf>(
    { op: 'prepare', bytes, input },
    opts.timeoutMs ?? PREPARE_TIMEOUT_MS,
    placementFailure,
  );
}
