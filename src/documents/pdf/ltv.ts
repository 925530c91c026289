// Long-term validation data and document timestamps (PAdES, ETSI EN 319 142-1 §5.4–5.5), each as one incremental
// update through incremental.ts, so the bytes before are untouched. appendDss merges into an existing DSS (no VRI:
// validators search the whole DSS) and adds each certificate or CRL once. A document timestamp is an invisible
// signature field whose /V is a /DocTimeStamp dictionary (SubFilter ETSI.RFC3161) over the whole file but its
// /Contents. Pure byte work without a PDF library: a few milliseconds on the caller's thread for a large file.
import { createHash } from 'node:crypto';
import { Update } from './incremental.js';
import { PdfFile } from './pdf-file.js';
import { dictOf, nameOf, PdfDict, PdfName, PdfRef, PdfStream, PdfString, type PdfValue } from './pdf-syntax.js';

export type ValidationData = { certsDer: Uint8Array[]; crlsDer: Uint8Array[]; ocspsDer?: Uint8Array[] };

/** Room for the timestamp token in /Contents, in bytes (hex doubles it): token plus a TSA chain of a few certs. */
export const DOC_TIMESTAMP_PLACEHOLDER_BYTES = 10240;

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Appends a DSS revision holding `data` merged with the DSS already in the file. */
export function appendDss(pdf: Uint8Array, data: ValidationData): Uint8Array {
  const file = new PdfFile(pdf);
  const rootRef = file.trailer.get('Root');
  const catalog = file.dict(rootRef);
  if (!(rootRef instanceof PdfRef) || !catalog) throw new Error('PDF: no document catalog');
  const up = new Update(file);
  const old = file.dict(catalog.get('DSS'));
  let dss = old ?? new PdfDict().with('Type', new PdfName('DSS'));
  for (const [key, items] of [
    ['Certs', data.certsDer],
    ['CRLs', data.crlsDer],
    ['OCSPs', data.ocspsDer ?? []],
  ] as const) {
    const existing = file.resolve(dss.get(key));
    const refs: PdfValue[] = Array.isArray(existing) ? [...existing] : [];
    const have = new Set<string>();
    for (const r of refs) {
      const s = file.resolve(r);
      if (s instanceof PdfStream) have.add(sha(file.decode(s)));
    }
    let added = false;
    for (const der of items) {
      const h = sha(der);
      if (have.has(h)) continue;
      have.add(h);
      refs.push(up.stream(der));
      added = true;
    }
    if (added || refs.length) dss = dss.with(key, refs);
  }
  const dssRef = catalog.get('DSS') instanceof PdfRef ? (catalog.get('DSS') as PdfRef) : up.ref();
  up.set(dssRef, dss);
  if (!(catalog.get('DSS') instanceof PdfRef)) up.set(rootRef, catalog.with('DSS', dssRef));
  return up.append().pdf;
}

export type PreparedDocTimestamp = {
  pdf: Uint8Array;
  /** Offset of the first hex digit inside /Contents <...>, and how many hex digits fit. */
  contentsOffset: number;
  contentsHexLength: number;
  /** SHA-256 over the signed byte range: the imprint the TSA stamps. */
  imprint: Uint8Array;
};

/** Appends an empty document timestamp (field, widget, /DocTimeStamp dictionary) and hashes its byte range. */
export function prepareDocTimestamp(pdf: Uint8Array): PreparedDocTimestamp {
  const file = new PdfFile(pdf);
  const rootRef = file.trailer.get('Root');
  let catalog = file.dict(rootRef);
  if (!(rootRef instanceof PdfRef) || !catalog) throw new Error('PDF: no document catalog');
  const up = new Update(file);
  const sigRef = up.ref();
  const fieldRef = up.ref();

  const formValue = catalog.get('AcroForm');
  const form = file.dict(formValue) ?? new PdfDict();
  const fieldsValue = form.get('Fields');
  const fields = file.resolve(fieldsValue);
  const list: PdfValue[] = Array.isArray(fields) ? [...fields] : [];
  const name = `Signet document timestamp ${countDocTimestamps(file, list) + 1}`;
  list.push(fieldRef);
  let newForm = form.with('SigFlags', 3);
  if (fieldsValue instanceof PdfRef) up.set(fieldsValue, list);
  else newForm = newForm.with('Fields', list);
  if (formValue instanceof PdfRef) up.set(formValue, newForm);
  else catalog = catalog.with('AcroForm', newForm);
  if (!(formValue instanceof PdfRef)) up.set(rootRef, catalog);

  let widget = new PdfDict()
    .with('FT', new PdfName('Sig'))
    .with('T', new PdfString(new Uint8Array(Buffer.from(name, 'latin1'))))
    .with('V', sigRef)
    .with('Type', new PdfName('Annot'))
    .with('Subtype', new PdfName('Widget'))
    .with('Rect', [0, 0, 0, 0])
    // Print | Locked: an invisible widget nobody can move or delete.
    .with('F', 132);
  const page = firstPage(file, catalog);
  if (page) widget = widget.with('P', page);
  up.set(fieldRef, widget);

  const range = `/ByteRange [0 ${'0'.repeat(10)} ${'0'.repeat(10)} ${'0'.repeat(10)}]`;
  up.setRaw(
    sigRef,
    `<</Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 ${range} /Contents <${'0'.repeat(
      DOC_TIMESTAMP_PLACEHOLDER_BYTES * 2,
    )}>>>`,
  );
  const { pdf: out, bodyOffsets } = up.append();
  const buf = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  const body = bodyOffsets.get(sigRef.num)!;
  const rangeAt = buf.indexOf('/ByteRange [', body, 'latin1');
  const open = buf.indexOf('/Contents <', body, 'latin1') + '/Contents '.length;
  const close = open + 1 + DOC_TIMESTAMP_PLACEHOLDER_BYTES * 2;
  if (rangeAt < 0 || buf[close] !== 0x3e) throw new Error('document timestamp: placeholder not where expected');
  const byteRange = [0, open, close + 1, out.length - (close + 1)];
  buf.write(`/ByteRange [${byteRange.join(' ')}]`.padEnd(range.length, ' '), rangeAt, 'latin1');
  const imprint = createHash('sha256')
    .update(buf.subarray(0, open))
    .update(buf.subarray(close + 1))
    .digest();
  return {
    pdf: out,
    contentsOffset: open + 1,
    contentsHexLength: close - open - 1,
    imprint: new Uint8Array(imprint),
  };
}

/** Writes the token into the prepared /Contents, in place. */
export function finishDocTimestamp(prepared: PreparedDocTimestamp, tokenDer: Uint8Array): Uint8Array {
  if (tokenDer.length * 2 > prepared.contentsHexLength)
    throw new Error(`document timestamp: token (${tokenDer.length} bytes) exceeds the placeholder`);
  Buffer.from(prepared.pdf.buffer, prepared.pdf.byteOffset, prepared.pdf.byteLength).write(
    Buffer.from(tokenDer).toString('hex'),
    prepared.contentsOffset,
    'latin1',
  );
  return prepared.pdf;
}

function countDocTimestamps(file: PdfFile, fields: PdfValue[]): number {
  let n = 0;
  for (const f of fields) {
    const v = file.dict(file.dict(f)?.get('V'));
    if (nameOf(v?.get('Type')) === 'DocTimeStamp') n++;
  }
  return n;
}

function firstPage(file: PdfFile, catalog: PdfDict): PdfRef | undefined {
  let node: PdfValue | undefined = catalog.get('Pages');
  for (let depth = 0; depth < 64 && node instanceof PdfRef; depth++) {
    const d = dictOf(file.resolve(node));
    if (!d) return undefined;
    if (nameOf(d.get('Type')) === 'Page') return node;
    const kids = file.resolve(d.get('Kids'));
    if (!Array.isArray(kids) || kids.length === 0) return undefined;
    node = kids[0];
  }
  return undefined;
}
