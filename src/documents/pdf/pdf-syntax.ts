// PDF object syntax (ISO 32000-1 §7.2–7.3) for the incremental reader and writer: a lexer and parser over the raw
// bytes and a serialiser. Loads no PDF library, so it runs on any thread in microseconds per object. Parsing never
// trusts the input: every malformed construct throws PdfSyntaxError, which callers turn into a catalogued 4xx.

export class PdfSyntaxError extends Error {
  constructor(message: string) {
    super(`PDF: ${message}`);
    this.name = 'PdfSyntaxError';
  }
}

export class PdfName {
  constructor(readonly name: string) {}
}
export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
  get key(): string {
    return `${this.num} ${this.gen}`;
  }
}
export class PdfString {
  constructor(readonly bytes: Uint8Array) {}
}
export class PdfDict {
  constructor(readonly map: Map<string, PdfValue> = new Map()) {}
  get(key: string): PdfValue | undefined {
    return this.map.get(key);
  }
  /** A copy with `key` set: dictionaries read from a file are never edited in place. */
  with(key: string, value: PdfValue): PdfDict {
    return new PdfDict(new Map(this.map).set(key, value));
  }
}
/** A stream as found in a file: its dictionary and where its raw (still encoded) data lies. */
export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    readonly data: Uint8Array,
  ) {}
}
export type PdfValue = null | boolean | number | PdfName | PdfRef | PdfString | PdfDict | PdfStream | PdfValue[];

const WS = new Uint8Array(256);
for (const c of [0, 9, 10, 12, 13, 32]) WS[c] = 1;
const DELIM = new Uint8Array(256);
for (const c of '()<>[]{}/%') DELIM[c.charCodeAt(0)] = 1;

export const isWhite = (c: number) => WS[c] === 1;

/** A cursor over the file's bytes. */
export class Lexer {
  constructor(
    readonly buf: Uint8Array,
    public pos = 0,
  ) {}

  skipWs(): void {
    const b = this.buf;
    while (this.pos < b.length) {
      const c = b[this.pos];
      if (WS[c]) this.pos++;
      else if (c === 0x25 /* % */) {
        while (this.pos < b.length && b[this.pos] !== 0x0a && b[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
  }

  /** The next regular token (keyword or number) without consuming it, or null at a delimiter or the end. */
  peekWord(): string | null {
    this.skipWs();
    let end = this.pos;
    while (end < this.buf.length && !WS[this.buf[end]] && !DELIM[this.buf[end]]) end++;
    return end === this.pos ? null : latin1(this.buf, this.pos, end);
  }

  word(): string {
    const w = this.peekWord();
    if (w === null) throw new PdfSyntaxError(`expected a keyword or number at offset ${this.pos}`);
    this.pos += w.length;
    return w;
  }

  expect(keyword: string): void {
    const w = this.word();
    if (w !== keyword) throw new PdfSyntaxError(`expected "${keyword}", found "${w.slice(0, 20)}" at ${this.pos}`);
  }

  /** One direct value; `num gen R` becomes a PdfRef. Streams are handled by the object reader. */
  value(depth = 0): PdfValue {
    if (depth > 100) throw new PdfSyntaxError('objects nested too deeply');
    this.skipWs();
    const b = this.buf;
    if (this.pos >= b.length) throw new PdfSyntaxError('unexpected end of file');
    const c = b[this.pos];
    if (c === 0x2f /* / */) return this.name();
    if (c === 0x28 /* ( */) return this.literalString();
    if (c === 0x3c /* < */) {
      if (b[this.pos + 1] === 0x3c) return this.dict(depth);
      return this.hexString();
    }
    if (c === 0x5b /* [ */) {
      this.pos++;
      const out: PdfValue[] = [];
      for (;;) {
        this.skipWs();
        if (this.pos >= b.length) throw new PdfSyntaxError('unterminated array');
        if (b[this.pos] === 0x5d) {
          this.pos++;
          return out;
        }
        out.push(this.value(depth + 1));
      }
    }
    const w = this.word();
    if (w === 'true') return true;
    if (w === 'false') return false;
    if (w === 'null') return null;
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(w)) throw new PdfSyntaxError(`unexpected token "${w.slice(0, 20)}"`);
    const n = Number(w);
    if (/^\d+$/.test(w)) {
      // `num gen R`?
      const save = this.pos;
      const gen = this.peekWord();
      if (gen !== null && /^\d+$/.test(gen)) {
        this.pos += gen.length;
        if (this.peekWord() === 'R') {
          this.pos += 1;
          return new PdfRef(n, Number(gen));
        }
      }
      this.pos = save;
    }
    return n;
  }

  dict(depth: number): PdfDict {
    this.pos += 2;
    const map = new Map<string, PdfValue>();
    for (;;) {
      this.skipWs();
      if (this.pos >= this.buf.length) throw new PdfSyntaxError('unterminated dictionary');
      if (this.buf[this.pos] === 0x3e && this.buf[this.pos + 1] === 0x3e) {
        this.pos += 2;
        return new PdfDict(map);
      }
      const key = this.value(depth + 1);
      if (!(key instanceof PdfName)) throw new PdfSyntaxError(`dictionary key is not a name at ${this.pos}`);
      map.set(key.name, this.value(depth + 1));
    }
  }

  private name(): PdfName {
    this.pos++;
    const start = this.pos;
    while (this.pos < this.buf.length && !WS[this.buf[this.pos]] && !DELIM[this.buf[this.pos]]) this.pos++;
    const raw = latin1(this.buf, start, this.pos);
    return new PdfName(raw.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))));
  }

  private hexString(): PdfString {
    const end = this.buf.indexOf(0x3e, this.pos);
    if (end < 0) throw new PdfSyntaxError('unterminated hex string');
    let hex = latin1(this.buf, this.pos + 1, end).replace(/\s+/g, '');
    if (!/^[0-9a-fA-F]*$/.test(hex)) throw new PdfSyntaxError('bad hex string');
    if (hex.length % 2) hex += '0';
    this.pos = end + 1;
    return new PdfString(new Uint8Array(Buffer.from(hex, 'hex')));
  }

  private literalString(): PdfString {
    const b = this.buf;
    const out: number[] = [];
    let depth = 0;
    this.pos++;
    for (;;) {
      if (this.pos >= b.length) throw new PdfSyntaxError('unterminated string');
      const c = b[this.pos++];
      if (c === 0x29 /* ) */) {
        if (depth === 0) break;
        depth--;
      } else if (c === 0x28) depth++;
      else if (c === 0x5c /* \ */) {
        const e = b[this.pos++];
        const simple: Record<number, number> = { 110: 10, 114: 13, 116: 9, 98: 8, 102: 12, 40: 40, 41: 41, 92: 92 };
        if (e in simple) out.push(simple[e]);
        else if (e >= 0x30 && e <= 0x37) {
          let v = e - 0x30;
          for (let i = 0; i < 2 && b[this.pos] >= 0x30 && b[this.pos] <= 0x37; i++) v = v * 8 + b[this.pos++] - 0x30;
          out.push(v & 0xff);
        } else if (e === 0x0d) {
          if (b[this.pos] === 0x0a) this.pos++;
        } else if (e !== 0x0a) out.push(e);
        continue;
      }
      out.push(c);
    }
    return new PdfString(Uint8Array.from(out));
  }
}

export const latin1 = (b: Uint8Array, start: number, end: number): string =>
  Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1');

/** PDF text of a value: names escaped, strings as hex, numbers without exponents. Streams cannot be inlined. */
export function serialize(v: PdfValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return formatNumber(v);
  if (v instanceof PdfName) return nameText(v.name);
  if (v instanceof PdfRef) return `${v.num} ${v.gen} R`;
  if (v instanceof PdfString) return `<${Buffer.from(v.bytes).toString('hex')}>`;
  if (Array.isArray(v)) return `[${v.map(serialize).join(' ')}]`;
  if (v instanceof PdfDict) {
    let s = '<<';
    for (const [k, x] of v.map) s += `${nameText(k)} ${serialize(x)}`;
    return s + '>>';
  }
  throw new PdfSyntaxError('a stream cannot be written as a direct value');
}

export const nameText = (name: string): string =>
  '/' +
  [...Buffer.from(name, 'latin1')]
    .map((c) =>
      c < 0x21 || c > 0x7e || DELIM[c] || c === 0x23 ? '#' + c.toString(16).padStart(2, '0') : String.fromCharCode(c),
    )
    .join('');

function formatNumber(n: number): string {
  if (!Number.isFinite(n)) throw new PdfSyntaxError('number out of range');
  if (Number.isInteger(n)) return String(n);
  return n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

/** Helpers for reading typed values out of dictionaries. */
export const nameOf = (v: PdfValue | undefined): string | undefined => (v instanceof PdfName ? v.name : undefined);
export const numberOf = (v: PdfValue | undefined): number | undefined => (typeof v === 'number' ? v : undefined);
export const dictOf = (v: PdfValue | undefined): PdfDict | undefined =>
  v instanceof PdfDict ? v : v instanceof PdfStream ? v.dict : undefined;
