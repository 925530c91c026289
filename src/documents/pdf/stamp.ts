// Stamping: draws signers' values into their fields. Guarantees:
// - typed signatures use an oblique face (the "script" look) scaled to fit the box; drawn signatures are PNGs
//   fitted into the box keeping their aspect ratio and centred; dates and texts are one line, shrunk to fit and
//   cut with an ellipsis below 5 pt. Non-Latin text renders through embedded DejaVu subsets (see fonts.ts);
// - values land upright on rotated pages (drawing happens in the page's shown space);
// - a drawn signature must be a real PNG of at most 2 MB and 4000 px a side, else 400 invalid_request with
//   meta.field "signature.png_base64"; an empty typed signature is invalid_request "signature.text";
// - the output is saved WITHOUT object streams (classic xref table), because the seal appends an incremental
//   update to it. Keep useObjectStreams: false.
import { inflateSync } from 'node:zlib';
import { MAX_PNG_BYTES, MAX_PNG_SIDE } from '../../limits.js';
import { apiError, ApiError } from '../../lib/errors.js';
import { PDFDocument, type PDFImage, rgb } from './pdf-lib.js';
import { cleanText, Fonts } from './fonts.js';
import { pageGeometry, toShown } from './geometry.js';
import { inShownSpace } from './placement.js';
import { runPdfTaskOr } from './pool.js';
import type { Field } from './types.js';

export const STAMP_TIMEOUT_MS = 30_000;

export type StampValue =
  | { kind: 'typed'; text: string }
  | { kind: 'drawn'; png: Uint8Array }
  | { kind: 'date'; text: string }
  | { kind: 'text'; text: string };

export type Stamp = { field: Field; value: StampValue };

const INK = rgb(0.05, 0.1, 0.35);
const PNG_FIELD = 'signature.png_base64';
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const badPng = (message: string) => apiError('invalid_request', { message, meta: { field: PNG_FIELD } });

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

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/**
 * Worker side: the image data must be as long as IHDR's size needs. pdf-lib's decoder does not check, so a PNG
 * whose header lies (a few pixels of data declaring thousands) would otherwise be embedded as a huge, mostly
 * garbage image. Inflation is capped at the declared length.
 */
export function checkPngData(png: Uint8Array): void {
  const { width, height } = checkSignaturePng(png);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const depth = png[24];
  const channels = CHANNELS[png[25]];
  if (!channels || ![1, 2, 4, 8, 16].includes(depth)) throw badPng('The drawn signature is not a valid PNG image.');
  const rowBytes = (w: number) => 1 + Math.ceil((w * channels * depth) / 8);
  let expected = 0;
  if (png[28] === 1) {
    for (const [x0, y0, dx, dy] of ADAM7) {
      const pw = Math.ceil((width - x0) / dx);
      const ph = Math.ceil((height - y0) / dy);
      if (pw > 0 && ph > 0) expected += ph * rowBytes(pw);
    }
  } else expected = height * rowBytes(width);
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 8 <= png.byteLength;) {
    const len = view.getUint32(at);
    if (String.fromCharCode(...png.subarray(at + 4, at + 8)) === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  let got: number;
  try {
    got = inflateSync(Buffer.concat(idat), { maxOutputLength: expected }).byteLength;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return; // more data than needed: harmless
    throw badPng('The drawn signature PNG could not be decoded.');
  }
  if (got < expected) throw badPng('The drawn signature PNG has less image data than its header declares.');
}

function checkStamps(stamps: Stamp[]): void {
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
  opts: { timeoutMs?: number } = {},
): Promise<Uint8Array> {
  checkStamps(stamps);
  return runPdfTaskOr<Uint8Array>({ op: 'stamp', bytes, stamps }, opts.timeoutMs ?? STAMP_TIMEOUT_MS);
}

/** Worker side of stampPdf. */
export async function stampInWorker(bytes: Uint8Array, stamps: Stamp[]): Promise<Uint8Array> {
  checkStamps(stamps);
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const images = new Map<Stamp, PDFImage>();
  for (const s of stamps) {
    if (s.value.kind !== 'drawn') continue;
    try {
      checkPngData(s.value.png);
      images.set(s, await doc.embedPng(s.value.png));
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw badPng('The drawn signature PNG could not be decoded.');
    }
  }
  const fonts = new Fonts(doc);
  const pages = doc.getPages();
  for (const s of stamps) {
    const page = pages[s.field.page - 1];
    if (!page) throw new Error(`field ${s.field.id} is on page ${s.field.page}; the PDF has ${pages.length}`);
    const g = pageGeometry(page);
    const r = toShown(g, s.field);
    const v = s.value;
    if (v.kind === 'drawn') {
      const img = images.get(s)!;
      const scale = Math.min(r.width / img.width, r.height / img.height);
      const w = img.width * scale;
      const h = img.height * scale;
      await inShownSpace(page, g, () =>
        page.drawImage(img, { x: r.x + (r.width - w) / 2, y: r.y + (r.height - h) / 2, width: w, height: h }),
      );
    } else {
      const script = v.kind === 'typed';
      const style = script ? 'script' : 'regular';
      const pad = Math.min(4, r.width * 0.05);
      const room = r.width - 2 * pad;
      const max = script ? r.height * 0.6 : Math.min(11, r.height * 0.7);
      const size = await fonts.fitSize(v.text, style, room, max, 5);
      const text = await fonts.truncate(v.text, style, size, room);
      // Baseline placed so the cap height sits in the vertical middle.
      const y = r.y + (r.height - size * 0.72) / 2;
      const x = script ? r.x + (r.width - (await fonts.width(text, style, size))) / 2 : r.x + pad;
      const color = script ? INK : rgb(0, 0, 0);
      await inShownSpace(page, g, () => fonts.draw(page, text, { x, y, size, style, color }));
    }
  }
  return doc.save({ useObjectStreams: false });
}
