// What a workspace's accent colour and logo must be, decided on bytes and strings only (no I/O). Guarantees:
// - An accepted colour is `#rrggbb` with at least BRAND_MIN_CONTRAST (WCAG 2.x) against white text and against
//   every light background our pages draw on (PAGE_BACKGROUNDS), so a button or link in it stays readable anywhere.
// - An accepted logo is a PNG or JPEG whose structure was walked end to end, returned rebuilt: only the chunks or
//   segments that draw the image (and its colour data) are kept, so text, metadata, trailing bytes and anything
//   a polyglot file might hide are gone. SVG (scripts), GIF and everything else are refused, never converted.
import { crc32, inflateSync } from 'node:zlib';
import { BRAND_MIN_CONTRAST, LOGO_MAX_BYTES, LOGO_MAX_SIDE } from '../limits.js';
import { ADAM7 } from '../lib/png.js';

/**
 * The light backgrounds accent colours are drawn on: white (cards, the dashboard, the button's text), the signer and
 * review pages' `--bg` (signing/page/signer.css) and the verify page's (verification/assets/verify.css). The
 * dashboard's dark scheme is not one: the accent is not drawn there, and no colour reaches 4.5:1 against both white
 * and near-black. brand-rules.test.ts reads the stylesheets, so a changed background fails until it is listed here.
 */
export const PAGE_BACKGROUNDS = ['#ffffff', '#eef0f4', '#f6f7f9'] as const;

const HEX = /^#([0-9a-f]{6})$/i;

const channel = (c: number): number => {
  const s = c / 255;
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
};

/** WCAG 2.x relative luminance of `#rrggbb`. */
export function luminance(hex: string): number {
  const m = HEX.exec(hex);
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`);
  const n = parseInt(m[1]!, 16);
  return 0.2126 * channel((n >> 16) & 255) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
}

/** WCAG 2.x contrast ratio of two `#rrggbb` colours, from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** A ratio as people read it, rounded down so a refused 4.497 never reads "4.5". */
export const formatRatio = (r: number): string => (Math.floor(r * 100) / 100).toFixed(2);

export type ColorRefusal =
  | { ok: false; problem: 'format'; reason: string; vars: { value: string } }
  | {
      ok: false;
      problem: 'contrast';
      reason: string;
      vars: { value: string; ratio: string; against: string; min: string };
    };

/** The colour normalized to lowercase `#rrggbb`, or why it is refused (the worst measured contrast in the reason). */
export function checkBrandColor(value: string): { ok: true; color: string } | ColorRefusal {
  const v = value.trim();
  if (!HEX.test(v))
    return {
      ok: false,
      problem: 'format',
      reason: `The accent colour must be written #RRGGBB (six hexadecimal digits), not "${v.slice(0, 40)}".`,
      vars: { value: v.slice(0, 40) },
    };
  const color = v.toLowerCase();
  // White text on the colour is the white background's ratio: one list covers both.
  const worst = PAGE_BACKGROUNDS.map((bg) => ({ bg, ratio: contrastRatio(color, bg) })).reduce((a, b) =>
    b.ratio < a.ratio ? b : a,
  );
  if (worst.ratio >= BRAND_MIN_CONTRAST) return { ok: true, color };
  const vars = { value: color, ratio: formatRatio(worst.ratio), against: worst.bg, min: String(BRAND_MIN_CONTRAST) };
  const against =
    worst.bg === '#ffffff' ? 'white text and the white page background' : `the page background ${worst.bg}`;
  return {
    ok: false,
    problem: 'contrast',
    reason:
      `The accent colour ${color} has a contrast of ${vars.ratio}:1 against ${against}; ` +
      `at least ${vars.min}:1 is needed. Choose a darker colour.`,
    vars,
  };
}

export type LogoType = 'image/png' | 'image/jpeg';
export type Logo = { type: LogoType; bytes: Uint8Array; width: number; height: number };
export type LogoProblem = 'type' | 'size' | 'dimensions' | 'damaged';
export type LogoRefusal = { ok: false; problem: LogoProblem; reason: string; vars: Record<string, string | number> };

const kb = (n: number) => `${Math.ceil(n / 1024)} KB`;
const refuse = (problem: LogoProblem, reason: string, vars: Record<string, string | number> = {}): LogoRefusal => ({
  ok: false,
  problem,
  reason,
  vars,
});
const damaged = (what: string) =>
  refuse('damaged', `The logo file is damaged or incomplete (${what}); save it again as PNG or JPEG.`, { what });

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const startsWith = (b: Uint8Array, sig: readonly number[]) => b.length >= sig.length && sig.every((x, i) => b[i] === x);
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

/** What a refused file looks like it is, to say so: SVG, GIF and WebP by name ('' for anything else). */
function sniffOther(b: Uint8Array): 'SVG' | 'GIF' | 'WebP' | '' {
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return 'GIF';
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'WebP';
  const head = Buffer.from(b.subarray(0, 4096))
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (/<svg[\s>]/i.test(head) || /^\s*<\?xml/i.test(head)) return 'SVG';
  return '';
}

/** The refusal of a logo file of `size` bytes, over LOGO_MAX_BYTES (for callers that know the size before reading). */
export const logoTooBig = (size: number): LogoRefusal =>
  refuse('size', `The logo is ${kb(size)}; at most ${kb(LOGO_MAX_BYTES)} is accepted.`, {
    size: kb(size),
    max: kb(LOGO_MAX_BYTES),
  });

/** The logo, checked and rebuilt without metadata, or why it is refused. */
export function checkLogo(bytes: Uint8Array): { ok: true; logo: Logo } | LogoRefusal {
  if (bytes.byteLength > LOGO_MAX_BYTES) return logoTooBig(bytes.byteLength);
  return startsWith(bytes, PNG_SIGNATURE)
    ? cleanPng(bytes)
    : bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff
      ? cleanJpeg(bytes)
      : (() => {
          const format = sniffOther(bytes);
          const kind = format === 'SVG' ? 'an SVG image' : format ? `a ${format} image` : 'not an image we accept';
          return refuse('type', `The logo is ${kind}; only PNG or JPEG images are accepted (never SVG).`, { format });
        })();
}

/** Checked from the header, before any image data is read. */
const tooLarge = (width: number, height: number): LogoRefusal | null =>
  width > LOGO_MAX_SIDE || height > LOGO_MAX_SIDE
    ? refuse(
        'dimensions',
        `The logo is ${width}×${height} pixels; at most ${LOGO_MAX_SIDE}×${LOGO_MAX_SIDE} is accepted.`,
        { width, height, max: LOGO_MAX_SIDE },
      )
    : null;

// ── PNG ─────────────────────────────────────────────────────────────────────────────────────────────────────────
/** Ancillary chunks kept: transparency and colour data a viewer needs to draw the image as meant. */
const PNG_KEPT_ANCILLARY = new Set(['tRNS', 'gAMA', 'cHRM', 'sRGB', 'pHYs']);
/** Bits per sample allowed for each colour type. */
const PNG_DEPTHS: Record<number, { depths: number[]; samples: number }> = {
  0: { depths: [1, 2, 4, 8, 16], samples: 1 },
  2: { depths: [8, 16], samples: 3 },
  3: { depths: [1, 2, 4, 8], samples: 1 },
  4: { depths: [8, 16], samples: 2 },
  6: { depths: [8, 16], samples: 4 },
};

/** Row lengths (in bytes, filter byte excluded) of the image data, pass by pass for an interlaced image. */
function pngRows(width: number, height: number, bitsPerPixel: number, interlaced: boolean): number[] {
  const rowBytes = (w: number) => Math.ceil((w * bitsPerPixel) / 8);
  if (!interlaced) return Array<number>(height).fill(rowBytes(width));
  const rows: number[] = [];
  for (const [x0, y0, dx, dy] of ADAM7) {
    const w = Math.ceil((width - x0) / dx);
    const h = Math.ceil((height - y0) / dy);
    if (w > 0 && h > 0) for (let i = 0; i < h; i++) rows.push(rowBytes(w));
  }
  return rows;
}

function cleanPng(b: Uint8Array): { ok: true; logo: Logo } | LogoRefusal {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const kept: Uint8Array[] = [b.subarray(0, 8)];
  const idat: Uint8Array[] = [];
  let header: { width: number; height: number; depth: number; color: number; interlace: number } | null = null;
  let sawPalette = false;
  let idatDone = false;
  let end = false;
  for (let at = 8; !end;) {
    if (at + 12 > b.length) return damaged('it ends before its IEND chunk');
    const length = view.getUint32(at);
    const type = ascii(b, at + 4, at + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) return damaged('a chunk has no valid type');
    if (length > 0x7fffffff || at + 12 + length > b.length) return damaged(`the ${type} chunk is cut short`);
    const data = b.subarray(at + 8, at + 8 + length);
    if (crc32(b.subarray(at + 4, at + 8 + length)) !== view.getUint32(at + 8 + length))
      return damaged(`the ${type} chunk fails its CRC check`);
    const whole = b.subarray(at, at + 12 + length);
    at += 12 + length;
    if (header === null && type !== 'IHDR') return damaged('it does not start with IHDR');
    if (idat.length > 0 && type !== 'IDAT') idatDone = true;
    switch (type) {
      case 'IHDR': {
        if (header !== null || length !== 13) return damaged('its IHDR chunk is not valid');
        const d = new DataView(data.buffer, data.byteOffset, 13);
        header = {
          width: d.getUint32(0),
          height: d.getUint32(4),
          depth: data[8]!,
          color: data[9]!,
          interlace: data[12]!,
        };
        const rule = PNG_DEPTHS[header.color];
        if (header.width === 0 || header.height === 0 || header.width > 0x7fffffff || header.height > 0x7fffffff)
          return damaged('its size is not valid');
        if (!rule || !rule.depths.includes(header.depth) || data[10] !== 0 || data[11] !== 0 || header.interlace > 1)
          return damaged('its IHDR chunk is not valid');
        const big = tooLarge(header.width, header.height);
        if (big) return big;
        kept.push(whole);
        break;
      }
      case 'PLTE':
        if (sawPalette || idat.length > 0 || length === 0 || length % 3 !== 0 || length > 768)
          return damaged('its palette is not valid');
        sawPalette = true;
        kept.push(whole);
        break;
      case 'IDAT':
        if (idatDone) return damaged('its image data is split');
        idat.push(data);
        kept.push(whole);
        break;
      case 'IEND':
        if (length !== 0) return damaged('its IEND chunk is not valid');
        kept.push(whole);
        end = true;
        break;
      default:
        // A critical chunk we do not know (uppercase first letter) means we cannot know the image is drawn right.
        if (/^[A-Z]/.test(type)) return damaged(`it has an unknown critical chunk ${type}`);
        if (PNG_KEPT_ANCILLARY.has(type) && idat.length === 0) kept.push(whole);
    }
  }
  const h = header!;
  if (idat.length === 0) return damaged('it has no image data');
  if (h.color === 3 && !sawPalette) return damaged('its palette is missing');
  const samples = PNG_DEPTHS[h.color]!.samples;
  const rows = pngRows(h.width, h.height, samples * h.depth, h.interlace === 1);
  const expected = rows.reduce((n, r) => n + r + 1, 0);
  let pixels: Buffer;
  try {
    pixels = inflateSync(Buffer.concat(idat), { maxOutputLength: expected + 1 });
  } catch (err) {
    // More data than the header's size allows stops inflating at the limit (no decompression bomb).
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      return damaged('its image data has the wrong size');
    return damaged('its image data does not decompress');
  }
  if (pixels.length !== expected) return damaged('its image data has the wrong size');
  for (let i = 0, at = 0; i < rows.length; at += rows[i]! + 1, i++)
    if (pixels[at]! > 4) return damaged('its image data has an unknown row filter');
  const out = new Uint8Array(kept.reduce((n, k) => n + k.length, 0));
  kept.reduce((at, k) => (out.set(k, at), at + k.length), 0);
  return { ok: true, logo: { type: 'image/png', bytes: out, width: h.width, height: h.height } };
}

// ── JPEG ────────────────────────────────────────────────────────────────────────────────────────────────────────
/** SOFn markers (frame headers): C0–CF except DHT (C4), JPG (C8) and DAC (CC). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
/** Table and control segments a decoder needs, kept as they are: DHT, DAC, DQT, DNL, DRI, EXP. */
const JPEG_TABLES = new Set([0xc4, 0xcc, 0xdb, 0xdc, 0xdd, 0xdf]);
/** APPn segments kept, by marker and the identifier they open with: JFIF, the ICC profile, Adobe's colour transform. */
const JPEG_KEPT_APP: Record<number, string> = { 0xe0: 'JFIF\0', 0xe2: 'ICC_PROFILE\0', 0xee: 'Adobe' };

function cleanJpeg(b: Uint8Array): { ok: true; logo: Logo } | LogoRefusal {
  const kept: Uint8Array[] = [b.subarray(0, 2)];
  let size: { width: number; height: number } | null = null;
  let at = 2;
  for (;;) {
    if (at >= b.length) return damaged('it ends before its end marker');
    if (b[at] !== 0xff) return damaged('a segment does not start with a marker');
    while (b[at] === 0xff) at++; // fill bytes
    if (at >= b.length) return damaged('it ends before its end marker');
    const marker = b[at++]!;
    if (marker === 0xd9) {
      if (!size) return damaged('it has no image');
      kept.push(Uint8Array.of(0xff, 0xd9));
      break; // anything after EOI is dropped
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7))
      return damaged('a marker stands where a segment belongs');
    if (at + 2 > b.length) return damaged('a segment is cut short');
    const length = (b[at]! << 8) | b[at + 1]!;
    if (length < 2 || at + length > b.length) return damaged('a segment is cut short');
    const segment = b.subarray(at - 2, at + length);
    const body = b.subarray(at + 2, at + length);
    at += length;
    if (isSof(marker)) {
      if (size || body.length < 6) return damaged('its frame header is not valid');
      const height = (body[1]! << 8) | body[2]!;
      const width = (body[3]! << 8) | body[4]!;
      const components = body[5]!;
      if (width === 0 || height === 0 || components === 0 || body.length !== 6 + 3 * components)
        return damaged('its frame header is not valid');
      size = { width, height };
      const big = tooLarge(width, height);
      if (big) return big;
      kept.push(segment);
    } else if (marker >= 0xe0 && marker <= 0xef) {
      const id = JPEG_KEPT_APP[marker];
      if (id && ascii(body, 0, id.length) === id) kept.push(segment);
    } else if (marker === 0xfe) {
      // A comment: dropped.
    } else if (JPEG_TABLES.has(marker)) {
      kept.push(segment);
    } else if (marker === 0xda) {
      if (!size) return damaged('its image data comes before its frame header');
      // The entropy-coded data runs to the next marker that is neither a stuffed 0xFF00 nor a restart marker.
      let scanEnd = at;
      while (
        scanEnd + 1 < b.length &&
        !(b[scanEnd] === 0xff && b[scanEnd + 1] !== 0 && !(b[scanEnd + 1]! >= 0xd0 && b[scanEnd + 1]! <= 0xd7))
      )
        scanEnd++;
      if (scanEnd + 1 >= b.length) return damaged('its image data is cut short');
      kept.push(segment, b.subarray(at, scanEnd));
      at = scanEnd;
    } else {
      return damaged(`it has an unknown marker 0x${marker.toString(16).toUpperCase()}`);
    }
  }
  const out = new Uint8Array(kept.reduce((n, k) => n + k.length, 0));
  kept.reduce((at, k) => (out.set(k, at), at + k.length), 0);
  return { ok: true, logo: { type: 'image/jpeg', bytes: out, width: size.width, height: size.height } };
}
