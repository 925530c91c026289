// Reads a PDF the way an incremental writer and a signature validator need it: the cross-reference sections in
// file order (tables, streams and hybrids, following /Prev), each section's revision end, and any object as a
// given revision saw it (newest definition at or before that section), including objects inside object streams.
// Only the objects asked for are parsed, so opening a 100-page file costs its xref, not its content.
import { inflateSync } from 'node:zlib';
import {
  dictOf,
  isWhite,
  latin1,
  Lexer,
  nameOf,
  numberOf,
  PdfDict,
  PdfRef,
  PdfStream,
  PdfSyntaxError,
  type PdfValue,
} from './pdf-syntax.js';

export type XrefEntry =
  | { kind: 'free' }
  | { kind: 'offset'; offset: number; gen: number }
  | { kind: 'compressed'; stream: number; index: number };

export type XrefSection = {
  /** Where the section starts (the `xref` keyword or the xref stream object). */
  offset: number;
  trailer: PdfDict;
  entries: Map<number, XrefEntry>;
  /** End of this revision: just past the `%%EOF` line that follows the section. */
  end: number;
};

const MAX_SECTIONS = 10_000;

export class PdfFile {
  /** Oldest first. */
  readonly sections: XrefSection[];
  private readonly objStreams = new Map<number, { offsets: Map<number, number>; data: Uint8Array; first: number }>();

  constructor(readonly bytes: Uint8Array) {
    if (latin1(bytes, 0, Math.min(1024, bytes.length)).indexOf('%PDF-') < 0) throw new PdfSyntaxError('no %PDF header');
    this.sections = this.readSections();
  }

  get last(): XrefSection {
    return this.sections[this.sections.length - 1];
  }

  get trailer(): PdfDict {
    return this.last.trailer;
  }

  /** The entry for an object as section `upTo` (default: the last) sees it. */
  entry(num: number, upTo = this.sections.length - 1): XrefEntry | undefined {
    for (let i = upTo; i >= 0; i--) {
      const e = this.sections[i].entries.get(num);
      if (e) return e;
    }
    return undefined;
  }

  /** Next free object number (the trailer's /Size). */
  get size(): number {
    return numberOf(this.trailer.get('Size')) ?? 0;
  }

  /** The object `ref` names, as revision `upTo` saw it; undefined when it does not exist (a null object). */
  object(ref: PdfRef | number, upTo = this.sections.length - 1): PdfValue | undefined {
    const num = typeof ref === 'number' ? ref : ref.num;
    const e = this.entry(num, upTo);
    if (!e || e.kind === 'free') return undefined;
    if (e.kind === 'offset') return this.objectAt(e.offset, num);
    return this.compressedObject(e.stream, e.index, num);
  }

  /** Follows a reference (once, and again while it yields one) to a direct value. */
  resolve(v: PdfValue | undefined, upTo?: number): PdfValue | undefined {
    for (let i = 0; v instanceof PdfRef && i < 32; i++) v = this.object(v, upTo);
    return v;
  }

  dict(v: PdfValue | undefined, upTo?: number): PdfDict | undefined {
    return dictOf(this.resolve(v, upTo));
  }

  /** The decoded bytes of a stream (FlateDecode with PNG predictors, or no filter). */
  decode(stream: PdfStream): Uint8Array {
    const filter = this.resolve(stream.dict.get('Filter'));
    const names = (Array.isArray(filter) ? filter : filter === undefined ? [] : [filter]).map(nameOf);
    let data = stream.data;
    for (const [i, name] of names.entries()) {
      if (name !== 'FlateDecode') throw new PdfSyntaxError(`unsupported stream filter ${name ?? '?'}`);
      try {
        data = inflateSync(data);
      } catch {
        throw new PdfSyntaxError('corrupt compressed stream');
      }
      const parms = this.resolve(stream.dict.get('DecodeParms'));
      const p = dictOf(Array.isArray(parms) ? (parms[i] as PdfValue) : parms);
      const predictor = numberOf(p?.get('Predictor')) ?? 1;
      if (predictor >= 10) data = unpredictPng(data, numberOf(p?.get('Columns')) ?? 1);
      else if (predictor !== 1) throw new PdfSyntaxError(`unsupported predictor ${predictor}`);
    }
    return data;
  }

  private objectAt(offset: number, expectNum?: number): PdfValue {
    const lx = new Lexer(this.bytes, offset);
    const num = Number(lx.word());
    lx.word();
    lx.expect('obj');
    if (expectNum !== undefined && num !== expectNum)
      throw new PdfSyntaxError(`object ${expectNum} is not at offset ${offset}`);
    const value = lx.value();
    if (!(value instanceof PdfDict) || lx.peekWord() !== 'stream') return value;
    lx.pos += 'stream'.length;
    // The keyword is followed by CRLF or LF.
    if (this.bytes[lx.pos] === 0x0d) lx.pos++;
    if (this.bytes[lx.pos] === 0x0a) lx.pos++;
    const start = lx.pos;
    let length = numberOf(this.resolve(value.get('Length')));
    if (length === undefined || start + length > this.bytes.length || !endstreamAt(this.bytes, start + length)) {
      const end = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).indexOf(
        'endstream',
        start,
        'latin1',
      );
      if (end < 0) throw new PdfSyntaxError('stream without endstream');
      length = end - start;
      while (length > 0 && (this.bytes[start + length - 1] === 0x0a || this.bytes[start + length - 1] === 0x0d))
        length--;
    }
    return new PdfStream(value, this.bytes.subarray(start, start + length));
  }

  private compressedObject(streamNum: number, index: number, num: number): PdfValue {
    let os = this.objStreams.get(streamNum);
    if (!os) {
      const s = this.object(streamNum);
      if (!(s instanceof PdfStream)) throw new PdfSyntaxError(`object stream ${streamNum} missing`);
      const data = this.decode(s);
      const n = numberOf(s.dict.get('N')) ?? 0;
      const first = numberOf(s.dict.get('First')) ?? 0;
      const lx = new Lexer(data);
      const offsets = new Map<number, number>();
      for (let i = 0; i < n; i++) offsets.set(Number(lx.word()), Number(lx.word()));
      os = { offsets, data, first };
      this.objStreams.set(streamNum, os);
    }
    const at = os.offsets.get(num);
    if (at === undefined) throw new PdfSyntaxError(`object ${num} not in object stream ${streamNum} (#${index})`);
    return new Lexer(os.data, os.first + at).value();
  }

  private readSections(): XrefSection[] {
    const b = this.bytes;
    const tail = latin1(b, Math.max(0, b.length - 2048), b.length);
    const m = /startxref\s+(\d+)\s*%%EOF\s*$/.exec(tail);
    if (!m) throw new PdfSyntaxError('no startxref at the end of the file (truncated?)');
    const out: XrefSection[] = [];
    const seen = new Set<number>();
    let offset: number | undefined = Number(m[1]);
    while (offset !== undefined) {
      if (seen.has(offset) || out.length > MAX_SECTIONS) throw new PdfSyntaxError('cross-reference loop');
      if (offset >= b.length) throw new PdfSyntaxError('cross-reference offset past the end of the file');
      seen.add(offset);
      const section = this.readSection(offset);
      out.push(section);
      offset = numberOf(section.trailer.get('Prev'));
    }
    out.reverse();
    // A linearized file's first-page section comes last in the chain but sits near the top: same revision.
    for (let i = 1; i < out.length; i++) out[i].end = Math.max(out[i].end, out[i - 1].end);
    return out;
  }

  private readSection(offset: number): XrefSection {
    const lx = new Lexer(this.bytes, offset);
    let trailer: PdfDict;
    let entries: Map<number, XrefEntry>;
    if (lx.peekWord() === 'xref') {
      lx.pos += 4;
      entries = new Map();
      while (lx.peekWord() !== 'trailer') {
        const start = Number(lx.word());
        const count = Number(lx.word());
        if (!Number.isInteger(start) || !Number.isInteger(count) || count < 0)
          throw new PdfSyntaxError('bad xref subsection');
        for (let i = 0; i < count; i++) {
          const off = Number(lx.word());
          const gen = Number(lx.word());
          const type = lx.word();
          entries.set(start + i, type === 'n' ? { kind: 'offset', offset: off, gen } : { kind: 'free' });
        }
      }
      lx.pos += 'trailer'.length;
      const t = lx.value();
      if (!(t instanceof PdfDict)) throw new PdfSyntaxError('trailer is not a dictionary');
      trailer = t;
      const hybrid = numberOf(t.get('XRefStm'));
      if (hybrid !== undefined) {
        // Hybrid file: the stream adds entries (compressed objects) the table leaves free or out.
        for (const [num, e] of this.xrefStream(hybrid).entries)
          if (!entries.has(num) || entries.get(num)!.kind === 'free') entries.set(num, e);
      }
    } else {
      ({ trailer, entries } = this.xrefStream(offset));
    }
    return { offset, trailer, entries, end: revisionEnd(this.bytes, offset) };
  }

  private xrefStream(offset: number): { trailer: PdfDict; entries: Map<number, XrefEntry> } {
    const s = this.objectAt(offset);
    if (!(s instanceof PdfStream) || nameOf(s.dict.get('Type')) !== 'XRef')
      throw new PdfSyntaxError(`no cross-reference at offset ${offset}`);
    const w = s.dict.get('W');
    if (!Array.isArray(w) || w.length !== 3 || !w.every((x) => typeof x === 'number' && x >= 0 && x <= 8))
      throw new PdfSyntaxError('bad /W in xref stream');
    const [w1, w2, w3] = w as number[];
    const size = numberOf(s.dict.get('Size')) ?? 0;
    const index = (s.dict.get('Index') as number[] | undefined) ?? [0, size];
    const data = this.decode(s);
    const entries = new Map<number, XrefEntry>();
    const rowLen = w1 + w2 + w3;
    let row = 0;
    const field = (at: number, width: number) => {
      let v = 0;
      for (let i = 0; i < width; i++) v = v * 256 + data[at + i];
      return v;
    };
    for (let k = 0; k + 1 < index.length; k += 2) {
      for (let i = 0; i < index[k + 1]; i++, row++) {
        const at = row * rowLen;
        if (at + rowLen > data.length) throw new PdfSyntaxError('xref stream shorter than its /Index');
        const type = w1 === 0 ? 1 : field(at, w1);
        const f2 = field(at + w1, w2);
        const f3 = field(at + w1 + w2, w3);
        entries.set(
          index[k] + i,
          type === 1
            ? { kind: 'offset', offset: f2, gen: f3 }
            : type === 2
              ? { kind: 'compressed', stream: f2, index: f3 }
              : { kind: 'free' },
        );
      }
    }
    return { trailer: s.dict, entries };
  }
}

function endstreamAt(b: Uint8Array, at: number): boolean {
  let i = at;
  while (i < b.length && isWhite(b[i])) i++;
  return latin1(b, i, Math.min(b.length, i + 9)) === 'endstream';
}

/** Just past the first `%%EOF` (and its end-of-line) after `from`; the file's end when there is none. */
function revisionEnd(b: Uint8Array, from: number): number {
  const at = Buffer.from(b.buffer, b.byteOffset, b.byteLength).indexOf('%%EOF', from, 'latin1');
  if (at < 0) return b.length;
  let end = at + 5;
  if (b[end] === 0x0d) end++;
  if (b[end] === 0x0a) end++;
  return end;
}

function unpredictPng(data: Uint8Array, columns: number): Uint8Array {
  const rowLen = columns + 1;
  const rows = Math.floor(data.length / rowLen);
  const out = new Uint8Array(rows * columns);
  for (let r = 0; r < rows; r++) {
    const type = data[r * rowLen];
    for (let c = 0; c < columns; c++) {
      const x = data[r * rowLen + 1 + c];
      const left = c > 0 ? out[r * columns + c - 1] : 0;
      const up = r > 0 ? out[(r - 1) * columns + c] : 0;
      const upLeft = r > 0 && c > 0 ? out[(r - 1) * columns + c - 1] : 0;
      let v: number;
      if (type === 0) v = x;
      else if (type === 1) v = x + left;
      else if (type === 2) v = x + up;
      else if (type === 3) v = x + ((left + up) >> 1);
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        v = x + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
      } else throw new PdfSyntaxError('bad PNG predictor row');
      out[r * columns + c] = v & 0xff;
    }
  }
  return out;
}
