// Long-term validation data and document timestamps (PAdES, ETSI EN 319 142-1 §5.4–5.5), each as one incremental
// update through incremental.ts, so the bytes before are untouched. appendDss merges into an existing DSS (no VRI:
// validators search the whole DSS) and adds each certificate or CRL once. A document timestamp is an invisible
// signature field whose /V is a /DocTimeStamp dictionary (SubFilter ETSI.RFC3161) over the whole file but its
// /Contents, written by signature-field.ts (which also writes signers' fields). Pure byte work without a PDF
// library: a few milliseconds on the caller's thread for a large file.
import { createHash } from 'node:crypto';
import { Update } from './incremental.js';
import { PdfFile } from './pdf-file.js';
import { PdfDict, PdfName, PdfRef, PdfStream, type PdfValue } from './pdf-syntax.js';
import { prepareSignatureField, writeContents } from './signature-field.js';

export type ValidationData = { certsDer: Uint8Array[]; crlsDer: Uint8Array[]; ocspsDer?: Uint8Array[] };

export { DOC_TIMESTAMP_PLACEHOLDER_BYTES } from './signature-field.js';

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
  const { digest, ...prepared } = prepareSignatureField(pdf, { kind: 'doc_timestamp' });
  return { ...prepared, imprint: digest };
}

/** Writes the token into the prepared /Contents, in place. */
export function finishDocTimestamp(prepared: PreparedDocTimestamp, tokenDer: Uint8Array): Uint8Array {
  if (tokenDer.length * 2 > prepared.contentsHexLength)
    throw new Error(`document timestamp: token (${tokenDer.length} bytes) exceeds the placeholder`);
  return writeContents(prepared, tokenDer);
}
