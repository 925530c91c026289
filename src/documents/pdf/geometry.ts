// Page geometry for pdf-lib pages, matching what pdf.js (and so the anchors) calls the page's view: the CropBox
// clipped to the MediaBox, shown rotated clockwise by /Rotate. The API's top-left boxes live on that shown page.
import type { PDFPage } from './pdf-lib.js';
import type { Box } from './types.js';

export type Rect = [x0: number, y0: number, x1: number, y1: number];

export type PageGeometry = {
  /** Visible area in user space (normalised, x0 < x1, y0 < y1). */
  view: Rect;
  /** 0, 90, 180 or 270: clockwise, as viewers apply it. */
  rotation: number;
  /** Size of the page as shown (width and height swap for 90 and 270). */
  width: number;
  height: number;
};

/** PDF matrix [a b c d e f] */
export type Matrix = [number, number, number, number, number, number];

const LETTER: Rect = [0, 0, 612, 792];

export function normaliseRotation(angle: number): number {
  // pdf.js ignores a /Rotate that is not a multiple of 90; do the same so both agree.
  if (!Number.isFinite(angle) || angle % 90 !== 0) return 0;
  return ((angle % 360) + 360) % 360;
}

function normalise(r: { x: number; y: number; width: number; height: number }): Rect | null {
  const v = [r.x, r.y, r.x + r.width, r.y + r.height];
  if (!v.every(Number.isFinite)) return null;
  const x0 = Math.min(v[0], v[2]);
  const x1 = Math.max(v[0], v[2]);
  const y0 = Math.min(v[1], v[3]);
  const y1 = Math.max(v[1], v[3]);
  return x1 > x0 && y1 > y0 ? [x0, y0, x1, y1] : null;
}

export function pageGeometry(page: PDFPage): PageGeometry {
  const media = normalise(page.getMediaBox()) ?? LETTER;
  let view = media;
  const crop = normalise(page.getCropBox());
  if (crop) {
    const v: Rect = [
      Math.max(crop[0], media[0]),
      Math.max(crop[1], media[1]),
      Math.min(crop[2], media[2]),
      Math.min(crop[3], media[3]),
    ];
    if (v[2] > v[0] && v[3] > v[1]) view = v;
  }
  const rotation = normaliseRotation(page.getRotation().angle);
  const w = view[2] - view[0];
  const h = view[3] - view[1];
  const swap = rotation === 90 || rotation === 270;
  return { view, rotation, width: swap ? h : w, height: swap ? w : h };
}

/**
 * Matrix from "shown" space (origin bottom-left of the page as displayed, y up) to user space. Drawing inside
 * `q <this> cm … Q` lands upright for the reader whatever the page's /Rotate.
 */
export function shownToUser(g: PageGeometry): Matrix {
  const [x0, y0, x1, y1] = g.view;
  switch (g.rotation) {
    case 90:
      return [0, 1, -1, 0, x1, y0];
    case 180:
      return [-1, 0, 0, -1, x1, y1];
    case 270:
      return [0, -1, 1, 0, x0, y1];
    default:
      return [1, 0, 0, 1, x0, y0];
  }
}

/** A top-left box as a bottom-left rectangle in shown space (what pdf-lib's draw calls take). */
export function toShown(g: PageGeometry, b: Box): { x: number; y: number; width: number; height: number } {
  return { x: b.x, y: g.height - b.y - b.height, width: b.width, height: b.height };
}

export const round2 = (n: number): number => Math.round(n * 100) / 100;
