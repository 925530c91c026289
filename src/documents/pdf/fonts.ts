// Drawing a line of anyone's text: names, titles, typed signatures and values in Latin, Cyrillic, Greek, Chinese,
// Japanese, Korean, Arabic, Hebrew, Devanagari and what else the faces cover (faces.ts). Guarantees:
// - each character is drawn with the first face of its chain that has it; a character no face has is drawn as a
//   visible □ (never "?", never an invisible .notdef), and `missing` names it so callers can record the exact text;
// - a line is split into segments (one face, one bidi level); bidi-js orders them visually (Unicode bidi, rule L2),
//   fontkit shapes each (Arabic joining, Devanagari conjuncts and matras), so mixed right-to-left and left-to-right
//   lines read correctly;
// - the text is extractable as typed: fonts are embedded as subsets with ToUnicode maps, and where glyphs do not
//   map back to the text in order (right-to-left runs, shaped Indic clusters, the □) the segment is wrapped in a
//   marked-content span with /ActualText. pdftotext and other poppler-based readers treat a line as visual order
//   and reverse its right-to-left runs, so a right-to-left segment's ActualText is its text reversed: they recover
//   the logical string (checked in fonts.test.ts, default and -raw modes).
// What poppler 22 does with right-to-left text (found with pdftotext, -raw and -bbox): without ActualText, glyph
// ToUnicode maps give right-to-left words back in order in default mode but in visual order in -raw, and Devanagari
// with its i-matra before the consonant ("िप्रया"); with ActualText in logical order, every right-to-left run comes
// out reversed. Default mode reorders a whole line by a simple rule (right-to-left runs reversed, a page read right
// to left when such characters are the majority) that never puts a space between a right-to-left run and
// left-to-right text after it, and keeps digits in visual place: "Договор عقد 合同" extracts exactly with -raw,
// as "Договор  عقد合同" by default. Single-direction strings extract exactly in both modes.
// Worker-only: imported by the *.work.ts modules, never by a main-thread module.
import { createRequire } from 'node:module';
import {
  type FaceKey,
  type FontStyle,
  BOLD_FACES,
  OBLIQUE_FACES,
  cachedFontkit,
  chainFor,
  cjkOrder,
  face,
} from './faces.js';
import {
  type Color,
  type PDFDocument,
  type PDFFont,
  type PDFPage,
  PDFHexString,
  PDFName,
  PDFOperator,
  TextRenderingMode,
  beginText,
  endText,
  popGraphicsState,
  pushGraphicsState,
  rgb,
  setFillingColor,
  setFontAndSize,
  setLineWidth,
  setStrokingColor,
  setTextMatrix,
  setTextRenderingMode,
  showText,
} from './pdf-lib.js';
import { cleanText } from './text.js';

export type { FontStyle } from './faces.js';
export type Direction = 'ltr' | 'rtl' | 'auto';

/** Drawn where no face has the character. */
const BOX = '□';
/** Synthetic bold: outline width per point of size; synthetic oblique: the slant. */
const BOLD_STROKE = 0.03;
const SLANT = 0.2;

// Characters that make bidi matter (strong right-to-left, Arabic numbers, explicit marks); without any, an ltr or
// auto line is all level 0 and bidi-js is not consulted.
const RTL_HINT = /[\u0590-\u08ff\u200f\u061c\ufb1d-\ufdff\ufe70-\ufefe\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;
const RTL_SCRIPT = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const SCRIPTED = /[^\p{Script=Common}\p{Script=Inherited}\p{Script=Unknown}]/u;
// Scripts whose glyphs map back to their characters one to one, in order: no ActualText needed.
const SIMPLE =
  /^[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Georgian}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}\p{Script=Common}]*$/u;
const MARK = /\p{M}/u;

// bidi-js is CommonJS (a factory); its declarations say ES module, so it is loaded the way pdf-lib.ts loads pdf-lib.
type Bidi = ReturnType<typeof import('bidi-js').default>;
let bidi: Bidi | undefined;
/** Advance widths at 1 pt by face and laid-out text: the same in every document, so kept for the worker's life. */
const widths = new Map<string, number>();
const loadBidi = (): Bidi =>
  (bidi ??= (createRequire(import.meta.url)('bidi-js') as typeof import('bidi-js').default)());

/** A piece of a line in one face: `shown` is what fontkit lays out (it reverses right-to-left scripts itself). */
type Piece = { key: FaceKey; shown: string; actual: string | null; bold: boolean; oblique: boolean };
type Segment = { key: FaceKey; text: string; level: number; box?: string };

const reverse = (s: string) => [...s].reverse().join('');

/** Per-document font set: embeds each face once, on first use, as a subset. */
export class Fonts {
  private readonly embedded = new Map<FaceKey, PDFFont>();
  private readonly keys = new WeakMap<PDFPage, Map<FaceKey, PDFName>>();
  private readonly pieceCache = new Map<string, Piece[]>();
  private readonly encoded = new Map<string, PDFHexString>();
  private readonly dir: Direction;

  /** `dir`: the base direction of lines (default: each line's first strong character decides). */
  constructor(
    private readonly doc: PDFDocument,
    o: { dir?: Direction } = {},
  ) {
    doc.registerFontkit(cachedFontkit);
    this.dir = o.dir ?? 'auto';
  }

  private async pdfFont(key: FaceKey): Promise<PDFFont> {
    let f = this.embedded.get(key);
    if (!f) {
      f = await this.doc.embedFont(face(key).bytes, { subset: true });
      this.embedded.set(key, f);
    }
    return f;
  }

  /** The line's characters grouped by face and bidi level, in logical order. */
  private segments(text: string, style: FontStyle): Segment[] {
    const cjk = cjkOrder(text);
    const levels =
      this.dir === 'rtl' || RTL_HINT.test(text) ? loadBidi().getEmbeddingLevels(text, this.dir).levels : null;
    const segs: Segment[] = [];
    let i = 0;
    for (const ch of text) {
      const level = levels ? levels[i] : 0;
      i += ch.length;
      const cp = ch.codePointAt(0)!;
      const last = segs[segs.length - 1] as Segment | undefined;
      let key: FaceKey | undefined;
      if (last && !last.box && MARK.test(ch))
        key = last.key; // a mark stays with its base
      // A space stays in the current face when it has one, so a right-to-left name is one shaped run.
      else if (last && !last.box && ch === ' ' && face(last.key).has(cp)) key = last.key;
      else key = chainFor(ch, style, cjk).find((k) => face(k).has(cp));
      if (!key) {
        const boxKey = chainFor(BOX, style, cjk).find((k) => face(k).has(0x25a1)) ?? 'sans';
        segs.push({ key: boxKey, text: BOX, level, box: ch });
      } else if (last && !last.box && last.key === key && last.level === level) last.text += ch;
      else segs.push({ key, text: ch, level });
    }
    return segs;
  }

  /** The line as pieces in visual order, left to right. */
  private pieces(text: string, style: FontStyle): Piece[] {
    const cacheKey = `${style}\u0000${text}`;
    const hit = this.pieceCache.get(cacheKey);
    if (hit) return hit;
    const segs = this.segments(text, style);
    // Rule L2: from the highest level down to the lowest odd one, reverse every run of segments at that level or above.
    const odd = segs.map((s) => s.level).filter((l) => l % 2 === 1);
    if (odd.length > 0) {
      const lowestOdd = Math.min(...odd);
      for (let lv = Math.max(...segs.map((s) => s.level)); lv >= lowestOdd; lv--) {
        for (let a = 0; a < segs.length; a++) {
          if (segs[a].level < lv) continue;
          let b = a;
          while (b + 1 < segs.length && segs[b + 1].level >= lv) b++;
          segs.splice(a, b - a + 1, ...segs.slice(a, b + 1).reverse());
          a = b;
        }
      }
    }
    const out = segs.map((s): Piece => {
      const rtl = s.level % 2 === 1;
      // fontkit lays out a string whose first scripted character is right-to-left from right to left.
      const fontkitRtl = RTL_SCRIPT.test(SCRIPTED.exec(s.text)?.[0] ?? '');
      let shown = s.text;
      if (rtl !== fontkitRtl) shown = rtl ? mirror(reverse(s.text)) : reverse(s.text);
      let actual: string | null = null;
      if (s.box) actual = s.box;
      else if (rtl) actual = reverse(s.text);
      else if (!SIMPLE.test(s.text)) actual = s.text;
      const bold = style === 'bold' && !BOLD_FACES.has(s.key);
      const oblique = style === 'script' && !OBLIQUE_FACES.has(s.key) && !RTL_SCRIPT.test(s.text);
      return { key: s.key, shown, actual, bold, oblique };
    });
    if (this.pieceCache.size > 5000) this.pieceCache.clear();
    this.pieceCache.set(cacheKey, out);
    return out;
  }

  private async pieceWidth(p: Piece, size: number): Promise<number> {
    const k = `${p.key}\u0000${p.shown}`;
    let w = widths.get(k);
    if (w === undefined) {
      w = (await this.pdfFont(p.key)).widthOfTextAtSize(p.shown, 1);
      if (widths.size > 20000) widths.clear();
      widths.set(k, w);
    }
    return w * size;
  }

  /** The piece's glyph ids in this document's subset (fontkit lays a text out once per document). */
  private encode(font: PDFFont, p: Piece): PDFHexString {
    const k = `${p.key}\u0000${p.shown}`;
    let hex = this.encoded.get(k);
    if (!hex) this.encoded.set(k, (hex = font.encodeText(p.shown)));
    return hex;
  }

  /** Code points of `text` that no face has (drawn as □), each once, in order. */
  missing(text: string, style: FontStyle = 'regular'): number[] {
    const cps = this.segments(cleanText(text), style).flatMap((s) => (s.box ? [s.box.codePointAt(0)!] : []));
    return [...new Set(cps)];
  }

  async width(text: string, style: FontStyle, size: number): Promise<number> {
    let w = 0;
    for (const p of this.pieces(cleanText(text), style)) w += await this.pieceWidth(p, size);
    return w;
  }

  /** The line's extent above and below the baseline at `size`: the largest of its faces' ascents and descents. */
  extent(text: string, style: FontStyle, size: number): { ascent: number; descent: number } {
    let ascent = 0;
    let descent = 0;
    for (const p of this.pieces(cleanText(text), style)) {
      const f = face(p.key).font;
      ascent = Math.max(ascent, (f.ascent / f.unitsPerEm) * size);
      descent = Math.max(descent, (-f.descent / f.unitsPerEm) * size);
    }
    return { ascent, descent };
  }

  /** Largest size ≤ `max` (and ≥ `min`) at which the text fits `width`. */
  async fitSize(text: string, style: FontStyle, width: number, max: number, min = 4): Promise<number> {
    const w = await this.width(text, style, max);
    if (w <= width || w === 0) return max;
    return Math.max(min, (max * width) / w);
  }

  /** The text cut (with an ellipsis) to fit `width` at `size`. */
  async truncate(text: string, style: FontStyle, size: number, width: number): Promise<string> {
    const clean = cleanText(text);
    if ((await this.width(clean, style, size)) <= width) return clean;
    const chars = [...clean];
    let lo = 0;
    let hi = chars.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if ((await this.width(chars.slice(0, mid).join('') + '…', style, size)) <= width) lo = mid;
      else hi = mid - 1;
    }
    return chars.slice(0, lo).join('').trimEnd() + '…';
  }

  /** Greedy word wrap; words longer than a line (user agents, hashes, CJK runs) are broken between characters. */
  async wrap(text: string, style: FontStyle, size: number, width: number): Promise<string[]> {
    const lines: string[] = [];
    let line = '';
    const fits = async (s: string) => (await this.width(s, style, size)) <= width;
    for (const word of cleanText(text).split(' ')) {
      if (word === '') continue;
      const candidate = line ? `${line} ${word}` : word;
      if (await fits(candidate)) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      let rest = word;
      while (!(await fits(rest))) {
        const chars = [...rest];
        let n = 1;
        while (n < chars.length && (await fits(chars.slice(0, n + 1).join('')))) n++;
        // Never split a base from its marks (a Devanagari matra, an Arabic vowel sign).
        while (n > 1 && n < chars.length && MARK.test(chars[n])) n--;
        lines.push(chars.slice(0, n).join(''));
        rest = chars.slice(n).join('');
      }
      line = rest;
    }
    if (line) lines.push(line);
    return lines;
  }

  private resourceKey(page: PDFPage, key: FaceKey, font: PDFFont): PDFName {
    let m = this.keys.get(page);
    if (!m) this.keys.set(page, (m = new Map()));
    let name = m.get(key);
    if (!name) m.set(key, (name = page.node.newFontDictionary(font.name, font.ref)));
    return name;
  }

  /** Opens a marked-content span whose /ActualText is `text` (poppler and other readers extract it instead). */
  private span(text: string): PDFOperator {
    const props = this.doc.context.obj({ ActualText: PDFHexString.fromText(text) });
    return PDFOperator.of('BDC' as never, [PDFName.of('Span'), props as never]);
  }

  /** Draws one line with its baseline starting at (x, y) in the page's current coordinate system. */
  async draw(
    page: PDFPage,
    text: string,
    o: { x: number; y: number; size: number; style?: FontStyle; color?: Color; actual?: string },
  ): Promise<void> {
    const color = o.color ?? rgb(0, 0, 0);
    const ops: PDFOperator[] = [pushGraphicsState(), beginText(), setFillingColor(color)];
    // A line that stands for more than it shows (a value cut with an ellipsis) carries the whole text instead.
    if (o.actual !== undefined) ops.push(this.span(o.actual));
    let x = o.x;
    let outlined = false;
    for (const p of this.pieces(cleanText(text), o.style ?? 'regular')) {
      const font = await this.pdfFont(p.key);
      ops.push(setFontAndSize(this.resourceKey(page, p.key, font), o.size));
      if (p.bold !== outlined) {
        outlined = p.bold;
        if (p.bold) ops.push(setStrokingColor(color), setLineWidth(o.size * BOLD_STROKE));
        ops.push(setTextRenderingMode(p.bold ? TextRenderingMode.FillAndOutline : TextRenderingMode.Fill));
      }
      ops.push(setTextMatrix(1, 0, p.oblique ? SLANT : 0, 1, x, o.y));
      const span = p.actual !== null && o.actual === undefined;
      if (span) ops.push(this.span(p.actual!));
      ops.push(showText(this.encode(font, p)));
      if (span) ops.push(PDFOperator.of('EMC' as never, []));
      x += await this.pieceWidth(p, o.size);
    }
    if (o.actual !== undefined) ops.push(PDFOperator.of('EMC' as never, []));
    ops.push(endText(), popGraphicsState());
    page.pushOperators(...ops);
  }
}

/** Brackets and the like turned around, for right-to-left text fontkit will not lay out itself. */
function mirror(s: string): string {
  const b = loadBidi();
  let out = '';
  for (const ch of s) out += b.getMirroredCharacter(ch) ?? ch;
  return out;
}

/** Code points as "U+0BA4 U+1F600", for recording text a face could not draw. */
export function codePointList(cps: number[]): string {
  return cps.map((cp) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`).join(' ');
}
