// The font files and which one draws a character. Worker-only (imported by fonts.ts): a face's file is read and
// parsed by fontkit once per worker thread, on the first character that needs it, and kept; a PDF embeds subsets.
// Faces: DejaVu (dejavu-fonts-ttf: Latin, Cyrillic, Greek, Armenian, Georgian, symbols; regular, bold, oblique,
// mono) and Noto Sans (@expo-google-fonts/noto-sans-*, TrueType outlines: SC, JP and KR for Chinese, Japanese and
// Korean, regular only; Arabic, Hebrew and Devanagari, regular and bold). A character of a script with its own Noto
// face goes to that face first; anything else tries the style's DejaVu faces, then every Noto face.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
// fontkit's Indic shaper (Devanagari) is a regenerator-compiled generator that expects this global.
import 'regenerator-runtime/runtime.js';

export type FontStyle = 'regular' | 'bold' | 'script' | 'mono';

/** What fontkit gives us of a parsed font (the subset of its API we use). */
export type FontkitFont = {
  unitsPerEm: number;
  ascent: number;
  descent: number;
  hasGlyphForCodePoint(cp: number): boolean;
};

const require = createRequire(import.meta.url);
const dejavu = (file: string) => path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf', file);
const noto = (pkg: string, weight: '400Regular' | '700Bold') => {
  const dir = path.dirname(require.resolve(`@expo-google-fonts/noto-sans-${pkg}/package.json`));
  const name = pkg.length === 2 ? pkg.toUpperCase() : pkg[0].toUpperCase() + pkg.slice(1);
  return path.join(dir, weight, `NotoSans${name}_${weight}.ttf`);
};

/** Each face: its file, and for Noto faces without a real bold, that bold is drawn synthetically (fonts.ts). */
const FILES = {
  sans: () => dejavu('DejaVuSans.ttf'),
  bold: () => dejavu('DejaVuSans-Bold.ttf'),
  oblique: () => dejavu('DejaVuSans-Oblique.ttf'),
  mono: () => dejavu('DejaVuSansMono.ttf'),
  sc: () => noto('sc', '400Regular'),
  jp: () => noto('jp', '400Regular'),
  kr: () => noto('kr', '400Regular'),
  arabic: () => noto('arabic', '400Regular'),
  arabicBold: () => noto('arabic', '700Bold'),
  hebrew: () => noto('hebrew', '400Regular'),
  hebrewBold: () => noto('hebrew', '700Bold'),
  deva: () => noto('devanagari', '400Regular'),
  devaBold: () => noto('devanagari', '700Bold'),
} as const;

export type FaceKey = keyof typeof FILES;

/** Faces that are bold / oblique themselves (others asked for in those styles are drawn synthetically). */
export const BOLD_FACES: ReadonlySet<FaceKey> = new Set(['bold', 'arabicBold', 'hebrewBold', 'devaBold']);
export const OBLIQUE_FACES: ReadonlySet<FaceKey> = new Set(['oblique']);

const DEJAVU: Record<FontStyle, FaceKey[]> = {
  regular: ['sans'],
  bold: ['bold', 'sans'],
  script: ['oblique', 'sans'],
  mono: ['mono', 'sans'],
};
const bolder = (style: FontStyle, regular: FaceKey, bold: FaceKey): FaceKey[] =>
  style === 'bold' ? [bold, regular] : [regular];

// Scripts with their own face. Common and inherited characters (digits, punctuation, marks) follow the chain.
const ARABIC = /\p{Script=Arabic}/u;
const HEBREW = /\p{Script=Hebrew}/u;
const DEVANAGARI = /\p{Script=Devanagari}/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HANGUL = /\p{Script=Hangul}/u;

/**
 * The CJK faces in the order a line wants them. Han characters look different in Chinese, Japanese and Korean, so
 * a line with kana prefers the Japanese face and a line with Hangul the Korean one; otherwise Chinese.
 */
export function cjkOrder(line: string): FaceKey[] {
  if (KANA.test(line)) return ['jp', 'sc', 'kr'];
  if (HANGUL.test(line)) return ['kr', 'sc', 'jp'];
  return ['sc', 'jp', 'kr'];
}

/** The faces to try for character `ch`, in order, in `style`, on a line whose CJK order is `cjk`. */
export function chainFor(ch: string, style: FontStyle, cjk: FaceKey[]): FaceKey[] {
  const base = DEJAVU[style];
  if (ARABIC.test(ch)) return bolder(style, 'arabic', 'arabicBold');
  if (HEBREW.test(ch)) return bolder(style, 'hebrew', 'hebrewBold');
  if (DEVANAGARI.test(ch)) return bolder(style, 'deva', 'devaBold');
  if (CJK.test(ch)) return cjk;
  return [...base, ...cjk, ...bolder(style, 'arabic', 'arabicBold'), 'hebrew', 'deva'];
}

export type Face = { key: FaceKey; bytes: Uint8Array; font: FontkitFont; has(cp: number): boolean };

type EncodeStream = { push(chunk: Uint8Array | null): boolean; end(): void };
type SubsetInternals = {
  font: FontkitFont;
  /** The font's glyph ids in the subset so far (encode appends the parts of composite glyphs). */
  glyphs: number[];
  glyf: Uint8Array[];
  offset: number;
  _addGlyph(gid: number): number;
  includeGlyph(gid: number): number;
  encode(stream: EncodeStream): void;
  encodeStream(): unknown;
};
const padded = new WeakSet<object>();

type FontInternals = {
  _variationProcessor?: unknown;
  loca: { offsets: number[] };
  getGlyph(gid: number): {
    advanceWidth: number;
    _decode(): { numberOfContours: number; components?: { glyphID: number; pos: number }[] } | null;
    _getMetrics(): { leftBearing: number };
  };
  _getTableStream(tag: string): { pos: number; readBuffer(n: number): Uint8Array };
};
type SubsetTables = { loca: { offsets: number[] }; hmtx: { metrics: { advance: number; bearing: number }[] } };
/** A glyph as a subset copies it: its bytes padded to an even length, where its parts' ids sit, its metrics. */
type GlyphCopy = { bytes: Uint8Array; parts: { glyphID: number; pos: number }[]; advance: number; bearing: number };
const copies = new WeakMap<FontkitFont, Map<number, GlyphCopy>>();

/** fontkit's TTFSubset._addGlyph, read once per glyph: it decoded the whole outline on every copy. */
function glyphCopy(font: FontkitFont, gid: number): GlyphCopy {
  let byId = copies.get(font);
  if (!byId) copies.set(font, (byId = new Map()));
  let c = byId.get(gid);
  if (c) return c;
  const f = font as unknown as FontInternals;
  const glyph = f.getGlyph(gid);
  const glyf = glyph._decode();
  const stream = f._getTableStream('glyf');
  stream.pos += f.loca.offsets[gid];
  let bytes = stream.readBuffer(f.loca.offsets[gid + 1] - f.loca.offsets[gid]);
  if (bytes.length % 2 === 1) {
    // The same Buffer class as fontkit's own (its bundled stream accepts no other).
    const even = (bytes.constructor as unknown as { alloc(n: number): Uint8Array }).alloc(bytes.length + 1);
    even.set(bytes, 0);
    bytes = even;
  }
  const parts =
    glyf && glyf.numberOfContours < 0 ? (glyf.components ?? []).map(({ glyphID, pos }) => ({ glyphID, pos })) : [];
  c = { bytes, parts, advance: glyph.advanceWidth, bearing: glyph._getMetrics().leftBearing };
  byId.set(gid, c);
  return c;
}

/**
 * pdf-lib's fontkit (1.1.1) writes a small subset's glyph offsets in the short form (offset / 2) without padding
 * glyphs to an even length, so every glyph after an odd-length one was read from the wrong place and drawn blank
 * (Noto CJK glyphs often have odd lengths). Pads each copied glyph to an even length. A glyph's copy is made once
 * per worker (glyphCopy) and reused by every subset; a composite glyph's copy gets its parts' ids in this subset.
 */
function padSubsetGlyphs(font: FontkitFont): void {
  const proto = Object.getPrototypeOf(
    (font as unknown as { createSubset(): object }).createSubset(),
  ) as SubsetInternals;
  if (padded.has(proto)) return;
  padded.add(proto);
  encodeAtOnce(proto, font);
  const addGlyph = proto._addGlyph;
  proto._addGlyph = function (this: SubsetInternals & SubsetTables, gid: number) {
    // A variable font re-encodes outlines per instance: fontkit's own copy, then the padding.
    if ((this.font as unknown as FontInternals)._variationProcessor) {
      const at = addGlyph.call(this, gid);
      const buf = this.glyf[at];
      if (buf.length % 2 === 1) {
        const even = (buf.constructor as unknown as { alloc(n: number): Uint8Array }).alloc(buf.length + 1);
        even.set(buf, 0);
        this.glyf[at] = even;
        this.offset += 1;
      }
      return at;
    }
    const c = glyphCopy(this.font, gid);
    let bytes = c.bytes;
    if (c.parts.length) {
      const Buf = bytes.constructor as unknown as {
        from(b: Uint8Array): Uint8Array & { writeUInt16BE(v: number, at: number): void };
      };
      const own = Buf.from(bytes);
      for (const part of c.parts) own.writeUInt16BE(this.includeGlyph(part.glyphID), part.pos);
      bytes = own;
    }
    this.glyf.push(bytes);
    this.loca.offsets.push(this.offset);
    this.hmtx.metrics.push({ advance: c.advance, bearing: c.bearing });
    this.offset += bytes.length;
    return this.glyf.length - 1;
  };
}

type GlyphCache = {
  _glyphs: Record<number, unknown>;
  getGlyph(id: number, characters?: number[]): unknown;
};

/**
 * fontkit caches a glyph with the characters of its first request, and pdf-lib's ToUnicode map is made from them.
 * Subsetting asks for glyphs without characters (the parts of composite glyphs: "E" inside "Ê"); with the font kept
 * across documents, such a glyph stayed cached without its character and later documents could not extract it.
 * A glyph asked for without characters is therefore not cached.
 */
function keepCharacters(font: FontkitFont): void {
  const f = font as unknown as GlyphCache;
  const getGlyph = f.getGlyph.bind(f);
  f.getGlyph = (id, characters) => {
    if (characters?.length || f._glyphs[id]) return getGlyph(id, characters);
    const glyph = getGlyph(id, characters);
    delete f._glyphs[id];
    return glyph;
  };
}

/** Encoded subsets kept per font: the same glyphs (a title, a label's letters) are subset once per worker. */
const SUBSETS_KEPT = 200;
const subsets = new WeakMap<FontkitFont, Map<string, Uint8Array[]>>();

/**
 * fontkit streams a subset through its bundled Readable, whose ticks are timers: pdf-lib waited milliseconds per
 * embedded face, mostly idle. The subset is encoded at once instead, into the same stream class with its chunks
 * collected, and handed to pdf-lib's listeners (`data`, then `end`) as they are attached. The bytes depend only on
 * the font and the glyph ids included before encoding (what encoding adds follows from them), and pdf-lib reads
 * nothing else of the subset after it, so they are kept (SUBSETS_KEPT per font, the oldest dropped): subsetting was
 * the largest part of appending a signature page (issue 25).
 */
function encodeAtOnce(proto: SubsetInternals, font: FontkitFont): void {
  const sample = (font as unknown as { createSubset(): SubsetInternals }).createSubset();
  const EncodeStream = (proto.encodeStream.call(sample) as object).constructor as new () => EncodeStream;
  proto.encodeStream = function (this: SubsetInternals) {
    let kept = subsets.get(this.font);
    if (!kept) subsets.set(this.font, (kept = new Map()));
    const key = this.glyphs.join(',');
    let parts = kept.get(key);
    if (!parts) {
      const out: Uint8Array[] = (parts = []);
      const stream = new EncodeStream();
      stream.push = (chunk) => {
        if (chunk !== null) out.push(chunk);
        return true;
      };
      this.encode(stream);
      stream.end();
      if (kept.size >= SUBSETS_KEPT) kept.delete(kept.keys().next().value!);
      kept.set(key, parts);
    }
    const emitter = {
      on(event: string, listener: (chunk?: Uint8Array) => void) {
        if (event === 'data') for (const part of parts!) listener(part);
        if (event === 'end') listener();
        return emitter;
      },
    };
    return emitter;
  };
}

type Layout = (text: string, features?: unknown) => unknown;
/** Shaped texts kept per face: a worker shapes a name, a label or a date once, not in every document. */
const LAYOUTS_KEPT = 500;

/**
 * fontkit shapes on every call, and pdf-lib calls it for every width and every encoded text: shaping (GSUB and GPOS
 * lookups, most costly for Arabic, Devanagari and the large CJK faces) was the largest part of a stamp. The result
 * depends only on the text and the features, and neither pdf-lib nor we change it, so the face keeps the last
 * LAYOUTS_KEPT results (dropping the oldest).
 */
function memoLayout(font: FontkitFont): void {
  const f = font as unknown as { layout: Layout };
  const layout = f.layout.bind(f);
  const kept = new Map<string, unknown>();
  f.layout = (text, features) => {
    const key = features === undefined ? text : `${JSON.stringify(features)}\u0000${text}`;
    let run = kept.get(key);
    if (run === undefined) {
      run = layout(text, features);
      if (kept.size >= LAYOUTS_KEPT) kept.delete(kept.keys().next().value!);
      kept.set(key, run);
    }
    return run;
  };
}

const faces = new Map<FaceKey, Face>();
const parsed = new WeakMap<Uint8Array, FontkitFont>();

/** The face, read and parsed on first use and kept for the worker's life. */
export function face(key: FaceKey): Face {
  let f = faces.get(key);
  if (!f) {
    const bytes = readFileSync(FILES[key]());
    const font = fontkit.create(bytes) as unknown as FontkitFont;
    padSubsetGlyphs(font);
    keepCharacters(font);
    memoLayout(font);
    parsed.set(bytes, font);
    const cache = new Map<number, boolean>();
    f = {
      key,
      bytes,
      font,
      has(cp) {
        let v = cache.get(cp);
        if (v === undefined) cache.set(cp, (v = font.hasGlyphForCodePoint(cp)));
        return v;
      },
    };
    faces.set(key, f);
  }
  return f;
}

/**
 * fontkit for pdf-lib's registerFontkit: pdf-lib parses the bytes it embeds; for our faces it gets the font parsed
 * once per worker instead (a CJK face takes ~25 ms to parse; its subset is made per document either way).
 */
export const cachedFontkit = {
  create(bytes: Uint8Array, postscriptName?: string) {
    return parsed.get(bytes) ?? fontkit.create(bytes, postscriptName);
  },
} as unknown as typeof fontkit;
