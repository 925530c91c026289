// Fonts for everything we draw: DejaVu TTFs from the dejavu-fonts-ttf npm package, embedded as subsets through
// fontkit, so names in Latin, Cyrillic, Greek, Armenian, Georgian, Hebrew and Arabic render on any machine (no
// system fonts). Text is split into runs, each drawn with the first font of a fallback chain that has its glyphs;
// a character no font has is drawn as "?" rather than an invisible .notdef box. fontkit shapes each run (Arabic
// joining forms); there is no full bidi reordering, so a line mixing right-to-left and left-to-right words keeps
// the words' logical order.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { type Color, type PDFDocument, type PDFFont, type PDFPage, rgb } from './pdf-lib.js';
import { cleanText } from './text.js';

export type FontStyle = 'regular' | 'bold' | 'script' | 'mono';

const FILES: Record<string, string> = {
  sans: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
  oblique: 'DejaVuSans-Oblique.ttf',
  mono: 'DejaVuSansMono.ttf',
};

// The script look is an oblique sans; it lacks Arabic, which then falls back to the upright face.
const CHAINS: Record<FontStyle, string[]> = {
  regular: ['sans'],
  bold: ['bold', 'sans'],
  script: ['oblique', 'sans'],
  mono: ['mono', 'sans'],
};

const fontDir = path.join(path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

type Face = { bytes: Uint8Array; has(cp: number): boolean };
const faces = new Map<string, Face>();

function face(key: string): Face {
  let f = faces.get(key);
  if (!f) {
    const bytes = readFileSync(path.join(fontDir, FILES[key]));
    const font = fontkit.create(bytes);
    const cache = new Map<number, boolean>();
    f = {
      bytes,
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

type Run = { key: string; text: string };

/** Per-document font set: embeds each face once, on first use. */
export class Fonts {
  private embedded = new Map<string, PDFFont>();
  constructor(private readonly doc: PDFDocument) {
    doc.registerFontkit(fontkit);
  }

  private async pdfFont(key: string): Promise<PDFFont> {
    let f = this.embedded.get(key);
    if (!f) {
      f = await this.doc.embedFont(face(key).bytes, { subset: true });
      this.embedded.set(key, f);
    }
    return f;
  }

  runs(text: string, style: FontStyle): Run[] {
    const chain = CHAINS[style];
    const runs: Run[] = [];
    for (const ch of cleanText(text)) {
      const cp = ch.codePointAt(0)!;
      let key = chain.find((k) => face(k).has(cp));
      let out = ch;
      if (/\p{M}/u.test(ch) && runs.length > 0)
        key = runs[runs.length - 1].key; // a mark stays with its base
      // A space stays in the current run when its face has one: splitting "محمد علي" around a space from another
      // face drew the words as separate runs left to right, i.e. in reverse reading order for right-to-left text.
      else if (ch === ' ' && runs.length > 0 && face(runs[runs.length - 1].key).has(cp))
        key = runs[runs.length - 1].key;
      else if (!key) {
        key = chain[0];
        out = '?';
      }
      const last = runs[runs.length - 1];
      if (last && last.key === key) last.text += out;
      else runs.push({ key, text: out });
    }
    return runs;
  }

  async width(text: string, style: FontStyle, size: number): Promise<number> {
    let w = 0;
    for (const r of this.runs(text, style)) w += (await this.pdfFont(r.key)).widthOfTextAtSize(r.text, size);
    return w;
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

  /** Greedy word wrap; words longer than a line (user agents, hashes) are broken between characters. */
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
        lines.push(chars.slice(0, n).join(''));
        rest = chars.slice(n).join('');
      }
      line = rest;
    }
    if (line) lines.push(line);
    return lines;
  }

  /** Draws one line with its baseline at (x, y) in the page's current coordinate system. */
  async draw(
    page: PDFPage,
    text: string,
    o: { x: number; y: number; size: number; style?: FontStyle; color?: Color },
  ): Promise<void> {
    let x = o.x;
    for (const r of this.runs(text, o.style ?? 'regular')) {
      const font = await this.pdfFont(r.key);
      page.drawText(r.text, { x, y: o.y, size: o.size, font, color: o.color ?? rgb(0, 0, 0) });
      x += font.widthOfTextAtSize(r.text, o.size);
    }
  }
}
