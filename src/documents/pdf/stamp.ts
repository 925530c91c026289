// Stamping: draws signers' values into their fields. Guarantees:
// - typed signatures use an oblique face (the "script" look) scaled down until their whole width and height fit
//   the box, never cut; drawn signatures are PNGs fitted into the box keeping their aspect ratio and centred; a
//   ticked checkbox is a ✓ centred in its box;
//   dates and texts are one line shrunk to fit, down to 5 pt, then wrapped onto as many lines as the box holds,
//   and only then cut with an ellipsis (the line's extractable text stays the whole value). Every script renders
//   through embedded subsets (fonts.ts); a character no font has is a visible □;
// - values land upright on rotated pages (drawing happens in the page's shown space);
// - a drawn signature must be a real PNG of at most 2 MB and 4000 px a side, else 400 invalid_request with
//   meta.field "signature.png_base64"; an empty typed signature is invalid_request "signature.text";
// - by default the output is rewritten by pdf-lib WITHOUT object streams (classic xref table), because the seal
//   appends an incremental update to it. Keep useObjectStreams: false;
// - with `incremental: true` the drawing is instead appended as one incremental update (pdflib-incremental.ts): the
//   input is a byte prefix of the output and signatures already in it (a qualified signer's) keep verifying.
// This module is the calling thread's side (the entry and the checks that need no decoding) and loads no PDF
// library; the PNG data check and the drawing are stamp.work.ts, in a worker thread.
import { MAX_PNG_BYTES, MAX_PNG_SIDE } from '../../limits.js';
import { apiError } from '../../lib/errors.js';
import { runPdfTaskOr } from './pool.js';
import { cleanText } from './text.js';
import type { Field } from './types.js';

export const STAMP_TIMEOUT_MS = 30_000;

export type StampValue =
  | { kind: 'typed'; text: string }
  | { kind: 'drawn'; png: Uint8Array }
  | { kind: 'date'; text: string }
  | { kind: 'text'; text: string }
  /** A ticked checkbox: a check mark (✓, extractable text) filling the box. */
  | { kind: 'check' };

export type Stamp = { field: Field; value: StampValue };

const PNG_FIELD = 'signature.png_base64';
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export const badPng = (message: string) => apiError('invalid_request', { message, meta: { field: PNG_FIELD } });

/** Header checks for a drawn signature (cheap, no decoding); returns its declared size. */
export function checkSignaturePng(png: Uint8Array): { width: number; height: number } {
  if (!(png instanceof Uint8Array) || png.byteLength < 33 || PNG_SIGNATURE.some((b, i) => png[i] !== b)) {
    throw badPng('The drawn signature is not a PNG image.');
  }
  if (png.byteLength > MAX_PNG_BYTES) throw badPng(`The drawn signature is over ${MAX_PNG_BYTES} bytes.`);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  // The first chunk must be IHDR (length 13).
  if (view.getUint32(8) !== 13 || String.fromCharCode(...png.subarray(12, 16)) !== 'IHDR')
    throw badPng('The drawn signature is not a valid PNG image.');
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  if (width === 0 || height === 0) throw badPng('The drawn signature has no pixels.');
  if (width > MAX_PNG_SIDE || height > MAX_PNG_SIDE)
    throw badPng(`The drawn signature is over ${MAX_PNG_SIDE} pixels a side.`);
  return { width, height };
}

/** The checks of stampPdf's input that need no decoding (both threads run them). */
export function checkStamps(stamps: Stamp[]): void {
  for (const s of stamps) {
    if (s.value.kind === 'drawn') checkSignaturePng(s.value.png);
    if (s.value.kind === 'typed' && cleanText(s.value.text ?? '') === '') {
      throw apiError('invalid_request', {
        message: 'The typed signature is empty.',
        meta: { field: 'signature.text' },
      });
    }
  }
}

export async function stampPdf(
  bytes: Uint8Array,
  stamps: Stamp[],
  opts: { timeoutMs?: number; incremental?: boolean } = {},
): Promise<Uint8Array> {
  checkStamps(stamps);
  return runPdfTaskOr<Uint8Array>(
    { op: 'stamp', bytes, stamps, incremental: opts.incremental },
    opts.timeoutMs ?? STAMP_TIMEOUT_MS,
  );
}
