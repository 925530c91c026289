// The one incremental PDF writer (ISO 32000-1 §7.5.6): appends objects, a cross-reference table and a trailer after
// the last byte of a file. Guarantee: the input is a strict prefix of the output; no earlier byte is ever rewritten,
// so every signature already in the file keeps verifying. Used for the DSS, document timestamps and (later) signer
// signatures. Files whose last section is an xref stream get a classic table too, which readers accept as a
// following update (qpdf, pdfsig and Acrobat do); our own seals always end in a table.
import { PdfFile } from './pdf-file.js';
import { PdfDict, PdfRef, PdfStream, serialize, type PdfValue } from './pdf-syntax.js';

/** One object to write: a direct value, a stream (dictionary plus raw data), or prepared PDF text. */
export type NewObject = { ref: PdfRef; value: PdfValue } | { ref: PdfRef; raw: string };

export type Appended = {
  pdf: Uint8Array;
  /** Offset in `pdf` of each written object's body (after `num gen obj`), by object number. */
  bodyOffsets: Map<number, number>;
};

/** Builds one update for `file`; allocate numbers with `ref()`, then `append`. */
export class Update {
  private next: number;
  private readonly objects: NewObject[] = [];

  constructor(readonly file: PdfFile) {
    this.next = file.size;
  }

  /** A new object number. */
  ref(): PdfRef {
    return new PdfRef(this.next++, 0);
  }

  /** Writes `value` under `ref` (a new number, or an existing one to replace that object in this revision). */
  set(ref: PdfRef, value: PdfValue): this {
    this.objects.push({ ref, value });
    return this;
  }

  setRaw(ref: PdfRef, raw: string): this {
    this.objects.push({ ref, raw });
    return this;
  }

  /** A new stream object with unencoded data. */
  stream(data: Uint8Array, dict: PdfDict = new PdfDict()): PdfRef {
    const ref = this.ref();
    this.objects.push({ ref, value: new PdfStream(dict, data) });
    return ref;
  }

  get size(): number {
    return this.next;
  }

  append(): Appended {
    const base = this.file.bytes;
    const chunks: Buffer[] = [];
    let length = base.length;
    const push = (b: Buffer) => {
      chunks.push(b);
      length += b.length;
    };
    // Objects must start on a new line.
    if (base.length && base[base.length - 1] !== 0x0a && base[base.length - 1] !== 0x0d) push(Buffer.from('\n'));
    const offsets = new Map<number, number>();
    const bodyOffsets = new Map<number, number>();
    for (const o of this.objects) {
      offsets.set(o.ref.num, length);
      const head = `${o.ref.num} ${o.ref.gen} obj\n`;
      bodyOffsets.set(o.ref.num, length + head.length);
      if ('raw' in o) push(Buffer.from(`${head}${o.raw}\nendobj\n`, 'latin1'));
      else if (o.value instanceof PdfStream) {
        const dict = o.value.dict.with('Length', o.value.data.length);
        push(Buffer.from(`${head}${serialize(dict)}\nstream\n`, 'latin1'));
        push(Buffer.from(o.value.data));
        push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
      } else push(Buffer.from(`${head}${serialize(o.value)}\nendobj\n`, 'latin1'));
    }
    const xrefAt = length;
    push(Buffer.from(xrefTable(offsets, this.objects), 'latin1'));
    const prev = this.file.trailer;
    let trailer = new PdfDict().with('Size', Math.max(this.next, this.file.size)).with('Prev', this.file.last.offset);
    for (const key of ['Root', 'Info', 'ID', 'Encrypt'])
      if (prev.get(key) !== undefined) trailer = trailer.with(key, prev.get(key)!);
    push(Buffer.from(`trailer\n${serialize(trailer)}\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'));
    const pdf = new Uint8Array(length);
    pdf.set(base, 0);
    let at = base.length;
    for (const c of chunks) {
      pdf.set(c, at);
      at += c.length;
    }
    return { pdf, bodyOffsets };
  }
}

function xrefTable(offsets: Map<number, number>, objects: NewObject[]): string {
  const gens = new Map(objects.map((o) => [o.ref.num, o.ref.gen]));
  const nums = [...offsets.keys()].sort((a, b) => a - b);
  let out = 'xref\n';
  for (let i = 0; i < nums.length;) {
    let j = i;
    while (j + 1 < nums.length && nums[j + 1] === nums[j] + 1) j++;
    out += `${nums[i]} ${j - i + 1}\n`;
    for (let k = i; k <= j; k++)
      out += `${String(offsets.get(nums[k])).padStart(10, '0')} ${String(gens.get(nums[k])).padStart(5, '0')} n\r\n`;
    i = j + 1;
  }
  return out;
}
