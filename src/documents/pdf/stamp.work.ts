// Worker side of stamp.ts (whose header states the guarantees): the PNG data check, then the drawing with pdf-lib
// and the fonts. Runs only in a PDF worker thread: imported by pdf.worker.ts (and tests), never by a main-thread
// module.
import { inflateSync } from 'node:zlib';
import { ApiError } from '../../lib/errors.js';
import { PDFDocument, type PDFImage, type PDFPage, rgb } from './pdf-lib.js';
import { saveIncremental, snapshotObjects } from './pdflib-incremental.js';
import { Fonts } from './fonts.js';
import type { Box } from './types.js';
import { pageGeometry, toShown } from './geometry.js';
import { inShownSpace } from './placement.work.js';
import { badPng, checkSignaturePng, checkStamps, type Stamp } from './stamp.js';
import { cleanText } from './text.js';
import { ADAM7 } from '../../lib/png.js';

const INK = rgb(0.05, 0.1, 0.35);
const CHECK = '✓';

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

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

/** Worker side of stampPdf. */
export async function stampInWorker(
  bytes: Uint8Array,
  stamps: Stamp[],
  opts: { incremental?: boolean } = {},
): Promise<Uint8Array> {
  checkStamps(stamps);
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const loaded = opts.incremental ? snapshotObjects(doc, bytes) : null;
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
    } else if (v.kind === 'check') {
      const size = Math.min(r.height, r.width) * 0.8;
      const x = r.x + (r.width - (await fonts.width(CHECK, 'regular', size))) / 2;
      const y = r.y + (r.height - size * 0.72) / 2;
      await inShownSpace(page, g, () => fonts.draw(page, CHECK, { x, y, size, style: 'regular', color: rgb(0, 0, 0) }));
    } else if (v.kind === 'typed') {
      await inShownSpace(page, g, () => drawTyped(fonts, page, r, v.text));
    } else {
      await inShownSpace(page, g, () => drawValue(fonts, page, r, v.text));
    }
  }
  return loaded ? saveIncremental(doc, loaded) : doc.save({ useObjectStreams: false });
}

/**
 * A typed signature, centred and as large as 60% of the box's height allows, scaled down until its whole width
 * and its faces' full height fit: never cut, however long the name.
 */
async function drawTyped(fonts: Fonts, page: PDFPage, r: Box, text: string): Promise<void> {
  const pad = Math.min(4, r.width * 0.05);
  let size = r.height * 0.6;
  const width = await fonts.width(text, 'script', size);
  if (width > r.width - 2 * pad) size *= (r.width - 2 * pad) / width;
  let ext = fonts.extent(text, 'script', size);
  if (ext.ascent + ext.descent > r.height) {
    size *= r.height / (ext.ascent + ext.descent);
    ext = fonts.extent(text, 'script', size);
  }
  // Cap height in the vertical middle, moved as needed to keep the faces' ascent and descent inside the box.
  const y = Math.max(r.y + ext.descent, Math.min(r.y + (r.height - size * 0.72) / 2, r.y + r.height - ext.ascent));
  const x = r.x + (r.width - (await fonts.width(text, 'script', size))) / 2;
  await fonts.draw(page, text, { x, y, size, style: 'script', color: INK });
}

const MIN_VALUE_SIZE = 5;
const VALUE_LEADING = 1.15;

/**
 * A date or text value: one line shrunk to fit (down to 5 pt); below that, wrapped at 5 pt onto as many lines as
 * the box holds. Text that still does not fit ends in an ellipsis, and that line's extractable text (ActualText)
 * is the whole rest of the value, so no character is lost from the document's text.
 */
async function drawValue(fonts: Fonts, page: PDFPage, r: Box, text: string): Promise<void> {
  const pad = Math.min(4, r.width * 0.05);
  const room = r.width - 2 * pad;
  const size = await fonts.fitSize(text, 'regular', room, Math.min(11, r.height * 0.7), MIN_VALUE_SIZE);
  let lines = [text];
  let actual: string | undefined;
  if ((await fonts.width(text, 'regular', size)) > room) {
    const all = await fonts.wrap(text, 'regular', size, room);
    const fit = Math.max(1, Math.floor(r.height / (size * VALUE_LEADING)));
    lines = all.slice(0, fit);
    if (all.length > fit) {
      // The value from the last shown line on (wrap only breaks it, so its lines are found in order).
      const clean = cleanText(text);
      let at = 0;
      for (const l of all.slice(0, fit - 1)) at = clean.indexOf(l, at) + l.length;
      const rest = clean.slice(at).trim();
      lines[fit - 1] = await fonts.truncate(rest, 'regular', size, room);
      actual = rest;
    }
  }
  // The block's cap heights centred vertically; lines top-down.
  const block = size * 0.72 + (lines.length - 1) * size * VALUE_LEADING;
  let y = r.y + (r.height + block) / 2 - size * 0.72;
  for (const [i, line] of lines.entries()) {
    const last = i === lines.length - 1;
    await fonts.draw(page, line, { x: r.x + pad, y, size, actual: last ? actual : undefined });
    y -= size * VALUE_LEADING;
  }
}
