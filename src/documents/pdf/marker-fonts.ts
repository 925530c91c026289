// What the bytes of a shown string mean in a given font, for marker removal (marker-removal.ts): how they split
// into character codes (1 byte for simple fonts, 2 for Type0 fonts with Identity-H/V), each code's Unicode text
// (ToUnicode first, as pdf.js does; else the simple font's encoding and Differences) and its width in thousandths
// of text space (/Widths, /W and /DW, a Type3 font's FontMatrix, the standard 14 fonts' AFM metrics). What cannot
// be known is said so (U+FFFD text, an undefined width, or no decoder at all): callers then leave the text alone.
// Worker side only (pdf-lib).
import {
  decodePDFRawStream,
  PDFArray,
  PDFDict,
  type PDFDocument,
  PDFName,
  PDFNumber,
  PDFRawStream,
  StandardFontEmbedder,
} from './pdf-lib.js';

export const UNKNOWN = '\ufffd';

export type FontCodes = {
  bytesPerCode: 1 | 2;
  /** Vertical writing (Identity-V): positions move along y, which marker removal does not rewrite. */
  vertical: boolean;
  text(code: number): string;
  /** Advance in thousandths of text space units (before Tc, Tw and Tz), or undefined when unknown. */
  width(code: number): number | undefined;
};

type Ctx = PDFDocument['context'];

const num = (ctx: Ctx, v: unknown): number | undefined => {
  const x = v === undefined ? undefined : ctx.lookup(v as never);
  return x instanceof PDFNumber ? x.asNumber() : undefined;
};
const nameOf = (ctx: Ctx, v: unknown): string | undefined => {
  const x = v === undefined ? undefined : ctx.lookup(v as never);
  return x instanceof PDFName ? x.decodeText() : undefined;
};
const get = (d: PDFDict, key: string) => d.get(PDFName.of(key));

/** The decoded bytes of a stream, or null when pdf-lib cannot decode it (an unsupported filter). */
export function streamBytes(s: unknown): Uint8Array | null {
  try {
    if (s instanceof PDFRawStream) return decodePDFRawStream(s).decode();
    const un = (s as { getUnencodedContents?: () => Uint8Array } | null)?.getUnencodedContents;
    return un ? un.call(s) : null;
  } catch {
    return null;
  }
}

/** The decoder of a font dictionary, or null for an encoding it cannot split into codes. */
export function fontCodes(ctx: Ctx, font: PDFDict): FontCodes | null {
  const subtype = nameOf(ctx, get(font, 'Subtype'));
  const toUnicode = parseToUnicode(ctx, get(font, 'ToUnicode'));
  if (subtype === 'Type0') {
    const enc = nameOf(ctx, get(font, 'Encoding'));
    if (enc !== 'Identity-H' && enc !== 'Identity-V') return null;
    const kids = ctx.lookup(get(font, 'DescendantFonts'));
    const cid = kids instanceof PDFArray ? ctx.lookup(kids.get(0)) : undefined;
    const widths = cid instanceof PDFDict ? cidWidths(ctx, cid) : () => undefined;
    return {
      bytesPerCode: 2,
      vertical: enc === 'Identity-V',
      text: (code) => toUnicode?.get(code) ?? UNKNOWN,
      width: widths,
    };
  }
  const encoding = simpleEncoding(ctx, font);
  const text = (code: number) => toUnicode?.get(code) ?? encoding[code] ?? UNKNOWN;
  return { bytesPerCode: 1, vertical: false, text, width: simpleWidths(ctx, font, subtype, text) };
}

function simpleWidths(
  ctx: Ctx,
  font: PDFDict,
  subtype: string | undefined,
  text: (code: number) => string,
): (code: number) => number | undefined {
  const widths = ctx.lookup(get(font, 'Widths'));
  if (widths instanceof PDFArray) {
    const first = num(ctx, get(font, 'FirstChar')) ?? 0;
    const desc = ctx.lookup(get(font, 'FontDescriptor'));
    const missing = desc instanceof PDFDict ? (num(ctx, get(desc, 'MissingWidth')) ?? 0) : 0;
    let scale = 1;
    if (subtype === 'Type3') {
      // A Type3 glyph space is its FontMatrix's, not thousandths of text space.
      const m = ctx.lookup(get(font, 'FontMatrix'));
      const a = m instanceof PDFArray ? num(ctx, m.get(0)) : undefined;
      if (a === undefined) return () => undefined;
      scale = a * 1000;
    }
    return (code) => {
      const i = code - first;
      const w = i >= 0 && i < widths.size() ? num(ctx, widths.get(i)) : missing;
      return w === undefined ? undefined : w * scale;
    };
  }
  // Only the standard 14 fonts may omit /Widths; their metrics ship with pdf-lib (WinAnsi text).
  const base = nameOf(ctx, get(font, 'BaseFont'));
  let embedder: { widthOfTextAtSize(t: string, size: number): number } | undefined;
  try {
    embedder = base ? StandardFontEmbedder.for(base as never) : undefined;
  } catch {
    embedder = undefined;
  }
  if (!embedder) return () => undefined;
  return (code) => {
    const t = text(code);
    if (t === UNKNOWN || [...t].length !== 1) return undefined;
    try {
      return embedder.widthOfTextAtSize(t, 1000);
    } catch {
      return undefined;
    }
  };
}

function cidWidths(ctx: Ctx, cid: PDFDict): (code: number) => number | undefined {
  const dw = num(ctx, get(cid, 'DW')) ?? 1000;
  const table = new Map<number, number>();
  const w = ctx.lookup(get(cid, 'W'));
  if (w instanceof PDFArray) {
    const items = w.asArray().map((x) => ctx.lookup(x));
    for (let i = 0; i < items.length;) {
      const first = items[i] instanceof PDFNumber ? (items[i] as PDFNumber).asNumber() : NaN;
      const next = items[i + 1];
      if (next instanceof PDFArray) {
        next.asArray().forEach((x, k) => {
          const v = num(ctx, x);
          if (v !== undefined) table.set(first + k, v);
        });
        i += 2;
      } else {
        const last = next instanceof PDFNumber ? next.asNumber() : NaN;
        const v = num(ctx, items[i + 2]);
        if (!Number.isInteger(first) || !Number.isInteger(last) || v === undefined || last - first > 0xffff) break;
        for (let c = first; c <= last; c++) table.set(c, v);
        i += 3;
      }
    }
  }
  // Identity encodings: the code is the CID.
  return (code) => table.get(code) ?? dw;
}

const hexText = (hex: string): string => {
  let s = '';
  for (let i = 0; i + 4 <= hex.length; i += 4) s += String.fromCharCode(parseInt(hex.slice(i, i + 4), 16));
  if (hex.length === 2) s = String.fromCharCode(parseInt(hex, 16));
  return s;
};

/** A ToUnicode CMap's bfchar and bfrange entries (code to text); null when the font has none. */
function parseToUnicode(ctx: Ctx, ref: unknown): Map<number, string> | null {
  if (ref === undefined) return null;
  const bytes = streamBytes(ctx.lookup(ref as never));
  if (!bytes) return null;
  const src = Buffer.from(bytes).toString('latin1');
  const map = new Map<number, string>();
  for (const block of src.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const m of block[1].matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]*)>/g))
      map.set(parseInt(m[1], 16), hexText(m[2]));
  }
  const range = /<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(?:<([0-9a-fA-F]*)>|\[([^\]]*)\])/g;
  for (const block of src.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const m of block[1].matchAll(range)) {
      const lo = parseInt(m[1], 16);
      const hi = Math.min(parseInt(m[2], 16), lo + 0xffff);
      if (m[3] !== undefined) {
        const base = hexText(m[3]);
        const head = base.slice(0, -1);
        const last = base.charCodeAt(base.length - 1);
        for (let c = lo; c <= hi; c++) map.set(c, head + String.fromCharCode(last + c - lo));
      } else {
        [...m[4].matchAll(/<([0-9a-fA-F]*)>/g)].forEach((d, k) => {
          if (lo + k <= hi) map.set(lo + k, hexText(d[1]));
        });
      }
    }
  }
  return map;
}

// Glyph names of printable ASCII, from 0x20, in StandardEncoding's order (WinAnsi differs at 0x27 and 0x60).
const ASCII_NAMES = (
  'space exclam quotedbl numbersign dollar percent ampersand quoteright parenleft parenright asterisk plus comma ' +
  'hyphen period slash zero one two three four five six seven eight nine colon semicolon less equal greater ' +
  'question at A B C D E F G H I J K L M N O P Q R S T U V W X Y Z bracketleft backslash bracketright ' +
  'asciicircum underscore quoteleft a b c d e f g h i j k l m n o p q r s t u v w x y z braceleft bar ' +
  'braceright asciitilde'
).split(' ');
const GLYPHS = new Map<string, string>(ASCII_NAMES.map((n, i) => [n, String.fromCharCode(0x20 + i)]));
GLYPHS.set('quotesingle', "'").set('grave', '`').set('quoteright', '\u2019').set('quoteleft', '\u2018');

function glyphText(name: string): string {
  const known = GLYPHS.get(name);
  if (known !== undefined) return known;
  const m = /^uni([0-9A-F]{4})$/.exec(name) ?? /^u([0-9A-F]{4,6})$/.exec(name);
  return m ? String.fromCodePoint(parseInt(m[1], 16)) : UNKNOWN;
}

const decodeAll = (label: string): string[] => {
  const dec = new TextDecoder(label);
  return Array.from({ length: 256 }, (_, c) => (c < 0x20 ? UNKNOWN : dec.decode(Uint8Array.of(c))));
};
let winAnsi: string[] | undefined;
let macRoman: string[] | undefined;
const standard = (): string[] =>
  Array.from({ length: 256 }, (_, c) => (c >= 0x20 && c < 0x7f ? glyphText(ASCII_NAMES[c - 0x20]) : UNKNOWN));

/** Code to text of a simple font: its base encoding (StandardEncoding by default) with its Differences. */
function simpleEncoding(ctx: Ctx, font: PDFDict): string[] {
  const enc = ctx.lookup(get(font, 'Encoding'));
  const base = enc instanceof PDFDict ? nameOf(ctx, get(enc, 'BaseEncoding')) : nameOf(ctx, get(font, 'Encoding'));
  let table: string[];
  if (base === 'WinAnsiEncoding') table = [...(winAnsi ??= decodeAll('windows-1252'))];
  else if (base === 'MacRomanEncoding') table = [...(macRoman ??= decodeAll('macintosh'))];
  else table = standard();
  const diffs = enc instanceof PDFDict ? ctx.lookup(get(enc, 'Differences')) : undefined;
  if (diffs instanceof PDFArray) {
    let code = 0;
    for (const item of diffs.asArray().map((x) => ctx.lookup(x))) {
      if (item instanceof PDFNumber) code = item.asNumber();
      else if (item instanceof PDFName && code >= 0 && code < 256) table[code++] = glyphText(item.decodeText());
    }
  }
  return table;
}
