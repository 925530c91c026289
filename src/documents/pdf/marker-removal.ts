// Marker removal: deletes anchor and template markers from the page content, so the sealed PDF's text layer (copy,
// pdftotext, screen readers) no longer holds them. Guarantees:
// - the text of a page is the text of its show operators (Tj, TJ, ', ") in stream order, page content and the
//   Form XObjects it draws directly, decoded per font (marker-fonts.ts); a marker is removed only when that text
//   has exactly as many matches of it as pdf.js found on the page, each made of whole glyphs;
// - only the marker's glyphs go: each operator showing one is rewritten with the marker's glyphs replaced by a TJ
//   adjustment of the same width (none when nothing follows on that line), so everything else stays where it was
//   drawn; every other operator keeps its bytes. A Form XObject holding a marker is copied for that page (other
//   pages drawing it keep the original);
// - what cannot be removed so (unknown encoding or widths, a marker in a nested form, more or fewer matches than
//   pdf.js saw, a stream that does not parse) is left untouched and returned: the caller masks it.
// Worker side only (pdf-lib).
import { deflateSync } from 'node:zlib';
import { type Op, parseContent } from './content-stream.js';
import { type FontCodes, fontCodes, streamBytes, UNKNOWN } from './marker-fonts.js';
import { PDFArray, PDFDict, type PDFDocument, PDFName, type PDFPage, PDFRawStream, type PDFRef } from './pdf-lib.js';
import { PdfString, type PdfValue, serialize } from './pdf-syntax.js';

/** A marker pdf.js found: its page (1-based) and a global regex matching its text. */
export type MarkerTarget = { page: number; re: RegExp };

type TextState = { font: FontCodes | null; size: number; tc: number; tw: number };
type Container = {
  bytes: Uint8Array;
  ops: Op[];
  shows: Map<number, TextState>;
  /** Writes the rewritten content back (a new page content stream, or a copy of a form for this page). */
  commit(bytes: Uint8Array): void;
};
type Glyph = { text: string; c: Container; op: number; k: number };

const SHOWS = new Set(['Tj', 'TJ', "'", '"']);
/** Operators after which a show's end position no longer matters: they set a new line or end the text. */
const RESETS = new Set(['Td', 'TD', 'Tm', 'T*', 'ET', 'BT', "'", '"']);

/** Removes what it can of `targets` from `pages` (of `doc`); returns the targets left in place, to be masked. */
export function removeMarkers<T extends MarkerTarget>(doc: PDFDocument, pages: PDFPage[], targets: readonly T[]): T[] {
  const left: T[] = [];
  for (const [page, mine] of groupBy(targets, (t) => t.page)) {
    try {
      left.push(...removeOnPage(doc, pages[page - 1], mine));
    } catch {
      left.push(...mine); // a content stream we cannot read: nothing on this page was changed
    }
  }
  return left;
}

function groupBy<T, K>(items: readonly T[], key: (t: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>();
  for (const t of items) (m.get(key(t)) ?? m.set(key(t), []).get(key(t))!).push(t);
  return m;
}

function removeOnPage<T extends MarkerTarget>(doc: PDFDocument, page: PDFPage, targets: T[]): T[] {
  const glyphs: Glyph[] = [];
  const root = pageContainer(doc, page);
  if (!root) return targets;
  const fonts = new Map<PDFDict, FontCodes | null>();
  walk(doc, root, page.node.Resources(), glyphs, fonts, (name, form, bytes) =>
    formContainer(doc, page, name, form, bytes),
  );

  let text = '';
  const owner: number[] = []; // glyph index of each UTF-16 unit of `text`
  glyphs.forEach((g, i) => {
    text += g.text;
    for (let k = 0; k < g.text.length; k++) owner.push(i);
  });

  // Each target's glyphs, when its matches are as many as pdf.js's and whole glyphs.
  const claims = new Map<T, Glyph[]>();
  const left: T[] = [];
  for (const group of groupBy(targets, (t) => t.re.source).values()) {
    const re = new RegExp(group[0].re.source, 'gu');
    const spans = [...text.matchAll(re)].map((m) => [m.index, m.index + m[0].length]);
    const whole = spans.every(([a, b]) => (a === 0 || owner[a - 1] !== owner[a]) && owner[b] !== owner[b - 1]);
    if (spans.length !== group.length || !whole) {
      left.push(...group);
      continue;
    }
    group.forEach((t, i) => claims.set(t, glyphs.slice(owner[spans[i][0]], owner[spans[i][1] - 1] + 1)));
  }

  // Rewrite; a target touching an operator that cannot be rewritten is dropped and the rest tried again.
  for (;;) {
    const edits = new Map<Container, Map<number, Set<number>>>();
    for (const gs of claims.values()) {
      for (const g of gs) {
        const perC = edits.get(g.c) ?? edits.set(g.c, new Map()).get(g.c)!;
        (perC.get(g.op) ?? perC.set(g.op, new Set()).get(g.op)!).add(g.k);
      }
    }
    const out = new Map<Container, Map<number, string>>();
    const failed = new Set<Op>();
    for (const [c, ops] of edits) {
      const texts = new Map<number, string>();
      for (const [i, removed] of ops) {
        const t = rewriteShow(c, i, removed);
        if (t === null) failed.add(c.ops[i]);
        else texts.set(i, t);
      }
      out.set(c, texts);
    }
    if (failed.size === 0) {
      for (const [c, texts] of out) c.commit(splice(c, texts));
      return left;
    }
    for (const [t, gs] of claims) {
      if (gs.some((g) => failed.has(g.c.ops[g.op]))) {
        claims.delete(t);
        left.push(t);
      }
    }
  }
}

/** The page's content (its streams joined by a newline), or null when a stream cannot be decoded. */
function pageContainer(doc: PDFDocument, page: PDFPage): Container | null {
  const ctx = doc.context;
  const contents = ctx.lookup(page.node.get(PDFName.of('Contents')));
  const streams = contents instanceof PDFArray ? contents.asArray().map((r) => ctx.lookup(r)) : [contents];
  const parts: Uint8Array[] = [];
  for (const s of streams) {
    if (s === undefined) continue;
    const b = streamBytes(s);
    if (!b) return null;
    parts.push(b, Uint8Array.of(0x0a));
  }
  const bytes = new Uint8Array(Buffer.concat(parts));
  return container(bytes, (out) => {
    page.node.set(PDFName.of('Contents'), ctx.register(ctx.flateStream(out)));
  });
}

/** A form drawn by the page, edited as a copy that only this page's resources name. */
function formContainer(doc: PDFDocument, page: PDFPage, name: PDFName, form: PDFRawStream, bytes: Uint8Array) {
  const ctx = doc.context;
  return container(bytes, (out) => {
    const dict = form.dict.clone(ctx);
    dict.delete(PDFName.of('DecodeParms'));
    dict.set(PDFName.of('Filter'), PDFName.of('FlateDecode'));
    const copy: PDFRef = ctx.register(PDFRawStream.of(dict, deflateSync(out)));
    // The page's resources may be inherited or shared with other pages: this page gets its own copies.
    const res = (page.node.Resources() ?? ctx.obj({})).clone(ctx);
    const xobjects = res.lookup(PDFName.of('XObject'), PDFDict).clone(ctx);
    xobjects.set(name, copy);
    res.set(PDFName.of('XObject'), xobjects);
    page.node.set(PDFName.of('Resources'), res);
  });
}

function container(bytes: Uint8Array, commit: (b: Uint8Array) => void): Container {
  return { bytes, ops: parseContent(bytes), shows: new Map(), commit };
}

/** Runs the operators that matter for text: the graphics state's text parameters, shows, and forms (one level). */
function walk(
  doc: PDFDocument,
  c: Container,
  resources: PDFDict | undefined,
  glyphs: Glyph[],
  fonts: Map<PDFDict, FontCodes | null>,
  openForm: ((name: PDFName, form: PDFRawStream, bytes: Uint8Array) => Container) | null,
  initial: TextState = { font: null, size: 0, tc: 0, tw: 0 },
): void {
  const ctx = doc.context;
  const stack: TextState[] = [];
  let st: TextState = { ...initial };
  const resource = (kind: string, key: PdfValue | undefined) => {
    const d = resources?.lookupMaybe(PDFName.of(kind), PDFDict);
    if (!d || typeof key !== 'object' || key === null || !('name' in key)) return undefined;
    return d.lookup(PDFName.of(key.name as string));
  };
  c.ops.forEach((o, i) => {
    const a = o.args;
    if (o.op === 'q') stack.push({ ...st });
    else if (o.op === 'Q') st = stack.pop() ?? st;
    else if (o.op === 'Tf') {
      const f = resource('Font', a[0]);
      if (f instanceof PDFDict && !fonts.has(f)) fonts.set(f, fontCodes(ctx, f));
      st.font = f instanceof PDFDict ? fonts.get(f)! : null;
      st.size = typeof a[1] === 'number' ? a[1] : 0;
    } else if (o.op === 'Tc' && typeof a[0] === 'number') st.tc = a[0];
    else if (o.op === 'Tw' && typeof a[0] === 'number') st.tw = a[0];
    else if (SHOWS.has(o.op)) {
      if (o.op === '"' && typeof a[0] === 'number' && typeof a[1] === 'number') [st.tw, st.tc] = [a[0], a[1]];
      c.shows.set(i, { ...st });
      let k = 0;
      for (const s of showStrings(o)) {
        for (const code of codes(s, st.font)) glyphs.push({ text: code.text, c, op: i, k: k++ });
      }
    } else if (o.op === 'Do' && openForm) {
      const x = resource('XObject', a[0]);
      if (!(x instanceof PDFRawStream) || x.dict.get(PDFName.of('Subtype'))?.toString() !== '/Form') return;
      const bytes = streamBytes(x);
      const name = PDFName.of((a[0] as { name: string }).name);
      // A form's own resources, else (an old convention) the page's.
      const res = x.dict.lookupMaybe(PDFName.of('Resources'), PDFDict) ?? resources;
      // Nested forms are not opened: their glyphs read as unknown text, so no marker matches across them.
      if (bytes) walk(doc, openForm(name, x, bytes), res, glyphs, fonts, null, st);
      else glyphs.push({ text: UNKNOWN, c, op: i, k: 0 });
    } else if (o.op === 'Do') glyphs.push({ text: UNKNOWN, c, op: i, k: 0 });
  });
}

const showStrings = (o: Op): PdfString[] => {
  const a = o.op === 'TJ' ? o.args[0] : o.op === '"' ? o.args[2] : o.args[0];
  const list = Array.isArray(a) ? a : [a];
  return list.filter((x): x is PdfString => x instanceof PdfString);
};

function codes(s: PdfString, font: FontCodes | null): { code: number; text: string }[] {
  const out: { code: number; text: string }[] = [];
  const n = font?.bytesPerCode ?? 1;
  for (let i = 0; i < s.bytes.length; i += n) {
    const code = n === 2 ? (s.bytes[i] << 8) | (s.bytes[i + 1] ?? 0) : s.bytes[i];
    out.push({ code, text: font ? font.text(code) : UNKNOWN });
  }
  return out;
}

/**
 * The text replacing show operator `i` of `c` without glyphs `removed` (numbered across its strings), or null when
 * it cannot be written: a removed glyph's width is unknown and something is drawn after it. '' deletes it.
 */
function rewriteShow(c: Container, i: number, removed: Set<number>): string | null {
  const o = c.ops[i];
  const st = c.shows.get(i)!;
  const font = st.font;
  if (!font) return null;
  const parts: string[] = [];
  let adjust = 0; // TJ units owed before the next kept glyph
  let unknown = false; // a removed glyph of unknown width is in `adjust`
  let run: number[] = [];
  let k = 0;
  const closeRun = () => {
    if (run.length > 0) parts.push(serialize(new PdfString(Uint8Array.from(run))));
    run = [];
  };
  const payAdjust = (): boolean => {
    if (unknown) return false;
    if (adjust !== 0) parts.push(serialize(adjust));
    adjust = 0;
    return true;
  };
  const elems = o.op === 'TJ' && Array.isArray(o.args[0]) ? o.args[0] : showStrings(o);
  for (const e of elems) {
    if (typeof e === 'number') {
      closeRun();
      adjust += e;
    } else if (e instanceof PdfString) {
      const n = font.bytesPerCode;
      for (let b = 0; b < e.bytes.length; b += n, k++) {
        const bytes = [...e.bytes.subarray(b, b + n)];
        if (!removed.has(k)) {
          if (!payAdjust()) return null;
          run.push(...bytes);
          continue;
        }
        closeRun();
        // The glyph's advance, (w/1000·Tfs + Tc + Tw if a one-byte space)·Th, as a TJ number: -n/1000·Tfs·Th.
        const w = font.width(n === 2 ? (bytes[0] << 8) | (bytes[1] ?? 0) : bytes[0]);
        const space = n === 1 && bytes[0] === 32 ? st.tw : 0;
        if (w === undefined || st.size === 0 || font.vertical) unknown = true;
        else adjust -= w + ((st.tc + space) * 1000) / st.size;
      }
    }
  }
  closeRun();
  // What the removed tail advanced matters only when a later show on the same line starts where this one ended.
  if ((adjust !== 0 || unknown) && !endsLine(c, i) && !payAdjust()) return null;
  const prefix = o.op === "'" ? 'T*' : o.op === '"' ? `${serialize(o.args[0])} Tw ${serialize(o.args[1])} Tc T*` : '';
  if (parts.length === 0) return prefix;
  // A lone string stays a Tj; anything with a positioning number is a TJ.
  const show = parts.length === 1 && parts[0].startsWith('<') ? `${parts[0]} Tj` : `[${parts.join(' ')}] TJ`;
  return `${prefix} ${show}`.trim();
}

/** Whether nothing after show `i` is drawn from where it ended: the next text operator starts a new line. */
function endsLine(c: Container, i: number): boolean {
  for (let j = i + 1; j < c.ops.length; j++) {
    if (RESETS.has(c.ops[j].op)) return true;
    if (SHOWS.has(c.ops[j].op)) return false;
  }
  return true;
}

/** The container's bytes with operators replaced (each replacement spaced, so tokens never run together). */
function splice(c: Container, texts: Map<number, string>): Uint8Array {
  const out: Buffer[] = [];
  let at = 0;
  for (const i of [...texts.keys()].sort((a, b) => a - b)) {
    const o = c.ops[i];
    out.push(Buffer.from(c.bytes.subarray(at, o.start)), Buffer.from(` ${texts.get(i)} `, 'latin1'));
    at = o.end;
  }
  out.push(Buffer.from(c.bytes.subarray(at)));
  return new Uint8Array(Buffer.concat(out));
}
