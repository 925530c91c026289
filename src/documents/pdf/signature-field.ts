// An empty signature field as one incremental update (incremental.ts): the input stays a byte prefix of the output,
// so every signature already in the file keeps verifying. Two kinds: a document timestamp (/DocTimeStamp, SubFilter
// ETSI.RFC3161, an invisible widget not listed in the page's /Annots, as ltv.ts has always written it) and a signer's
// or seal's signature (/Sig, SubFilter ETSI.CAdES.detached, /M /Name /Reason, an invisible locked widget on the first
// page, also in that page's /Annots). The /ByteRange covers the whole output but /Contents; `digest` is SHA-256 over
// it, and writeContents fills /Contents in place afterwards. Field names are unique in the file (" 2", " 3" appended).
// Pure byte work without a PDF library, like ltv.ts: it runs on any thread.
import { createHash } from 'node:crypto';
import { Update } from './incremental.js';
import { PdfFile } from './pdf-file.js';
import { pdfDate, pdfTextBytes } from './pdf-text.js';
import { dictOf, nameOf, PdfDict, PdfName, PdfRef, PdfString, serialize, type PdfValue } from './pdf-syntax.js';

/** Room for the timestamp token in /Contents, in bytes (hex doubles it): token plus a TSA chain of a few certs. */
export const DOC_TIMESTAMP_PLACEHOLDER_BYTES = 10240;

export type SignatureFieldOptions =
  | { kind: 'doc_timestamp' }
  | {
      kind: 'signature';
      fieldName: string;
      /** /Name, /Reason, /Location, /ContactInfo: written when given and not empty. */
      name?: string;
      reason?: string;
      location?: string;
      contactInfo?: string;
      /** The claimed signing time, /M. */
      signingTimeMs: number;
      /** Room for the CMS in /Contents, in bytes (hex doubles it). */
      placeholderBytes: number;
    };

export type PreparedSignatureField = {
  pdf: Uint8Array;
  /** Offset of the first hex digit inside /Contents <...>, and how many hex digits fit. */
  contentsOffset: number;
  contentsHexLength: number;
  /** SHA-256 over the signed byte range (a document timestamp's imprint, a CMS's messageDigest). */
  digest: Uint8Array;
};

const text = (s: string) => new PdfString(pdfTextBytes(s));

/** Appends an empty signature field (field and widget, signature dictionary) and hashes its byte range. */
export function prepareSignatureField(pdf: Uint8Array, opts: SignatureFieldOptions): PreparedSignatureField {
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
  const wanted =
    opts.kind === 'doc_timestamp' ? `Signet document timestamp ${countDocTimestamps(file, list) + 1}` : opts.fieldName;
  const name = uniqueName(wanted, fieldNames(file, list));
  list.push(fieldRef);
  let newForm = form.with('SigFlags', 3);
  if (fieldsValue instanceof PdfRef) up.set(fieldsValue, list);
  else newForm = newForm.with('Fields', list);
  if (formValue instanceof PdfRef) up.set(formValue, newForm);
  else catalog = catalog.with('AcroForm', newForm);
  if (!(formValue instanceof PdfRef)) up.set(rootRef, catalog);

  let widget = new PdfDict()
    .with('FT', new PdfName('Sig'))
    .with('T', text(name))
    .with('V', sigRef)
    .with('Type', new PdfName('Annot'))
    .with('Subtype', new PdfName('Widget'))
    .with('Rect', [0, 0, 0, 0])
    // Print | Locked: an invisible widget nobody can move or delete.
    .with('F', 132);
  const page = firstPage(file, catalog);
  if (page) widget = widget.with('P', page);
  up.set(fieldRef, widget);
  if (page && opts.kind === 'signature') addAnnot(file, up, page, fieldRef);

  const placeholderBytes = opts.kind === 'doc_timestamp' ? DOC_TIMESTAMP_PLACEHOLDER_BYTES : opts.placeholderBytes;
  const range = `/ByteRange [0 ${'0'.repeat(10)} ${'0'.repeat(10)} ${'0'.repeat(10)}]`;
  const contents = `/Contents <${'0'.repeat(placeholderBytes * 2)}>`;
  if (opts.kind === 'doc_timestamp')
    up.setRaw(sigRef, `<</Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 ${range} ${contents}>>`);
  else {
    let extra = `/M ${serialize(text(pdfDate(opts.signingTimeMs)))}`;
    for (const [key, value] of [
      ['Name', opts.name],
      ['Reason', opts.reason],
      ['Location', opts.location],
      ['ContactInfo', opts.contactInfo],
    ] as const)
      if (value) extra += ` /${key} ${serialize(text(value))}`;
    up.setRaw(
      sigRef,
      `<</Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached ${range} ${contents} ${extra}>>`,
    );
  }
  const { pdf: out, bodyOffsets } = up.append();
  const buf = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  const body = bodyOffsets.get(sigRef.num)!;
  const rangeAt = buf.indexOf('/ByteRange [', body, 'latin1');
  const open = buf.indexOf('/Contents <', body, 'latin1') + '/Contents '.length;
  const close = open + 1 + placeholderBytes * 2;
  if (rangeAt < 0 || buf[close] !== 0x3e) throw new Error('signature field: placeholder not where expected');
  const byteRange = [0, open, close + 1, out.length - (close + 1)];
  buf.write(`/ByteRange [${byteRange.join(' ')}]`.padEnd(range.length, ' '), rangeAt, 'latin1');
  const digest = createHash('sha256')
    .update(buf.subarray(0, open))
    .update(buf.subarray(close + 1))
    .digest();
  return { pdf: out, contentsOffset: open + 1, contentsHexLength: close - open - 1, digest: new Uint8Array(digest) };
}

/** Writes `der` (a CMS or a timestamp token) as hex into the prepared /Contents, in place; the rest stays '0'. */
export function writeContents(
  prepared: Pick<PreparedSignatureField, 'pdf' | 'contentsOffset' | 'contentsHexLength'>,
  der: Uint8Array,
): Uint8Array {
  if (der.length * 2 > prepared.contentsHexLength)
    throw new Error(
      `signature field: ${der.length} bytes exceed the ${prepared.contentsHexLength / 2}-byte placeholder`,
    );
  Buffer.from(prepared.pdf.buffer, prepared.pdf.byteOffset, prepared.pdf.byteLength).write(
    Buffer.from(der).toString('hex'),
    prepared.contentsOffset,
    'latin1',
  );
  return prepared.pdf;
}

/** The widget joins the page's /Annots: in the array's own object when indirect, else in a new page object. */
function addAnnot(file: PdfFile, up: Update, pageRef: PdfRef, widget: PdfRef): void {
  const page = file.dict(pageRef);
  if (!page) return;
  const annotsValue = page.get('Annots');
  const annots = file.resolve(annotsValue);
  const list: PdfValue[] = Array.isArray(annots) ? [...annots, widget] : [widget];
  if (annotsValue instanceof PdfRef && Array.isArray(annots)) up.set(annotsValue, list);
  else up.set(pageRef, page.with('Annots', list));
}

function countDocTimestamps(file: PdfFile, fields: PdfValue[]): number {
  let n = 0;
  for (const f of fields) {
    const v = file.dict(file.dict(f)?.get('V'));
    if (nameOf(v?.get('Type')) === 'DocTimeStamp') n++;
  }
  return n;
}

/** Every field's fully qualified name (ISO 32000-1 §12.7.3.2), walking /Kids. */
function fieldNames(file: PdfFile, fields: PdfValue[]): Set<string> {
  const out = new Set<string>();
  const seen = new Set<string>();
  const visit = (f: PdfValue, parent: string, depth: number) => {
    if (depth > 32) return;
    if (f instanceof PdfRef) {
      if (seen.has(f.key)) return;
      seen.add(f.key);
    }
    const d = file.dict(f);
    if (!d) return;
    const t = d.get('T');
    const own = t instanceof PdfString ? decodeText(t.bytes) : '';
    const name = [parent, own].filter(Boolean).join('.');
    if (own) out.add(name);
    const kids = file.resolve(d.get('Kids'));
    if (Array.isArray(kids)) for (const k of kids) visit(k, name, depth + 1);
  };
  for (const f of fields) visit(f, '', 0);
  return out;
}

function uniqueName(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) if (!taken.has(`${name} ${n}`)) return `${name} ${n}`;
}

const decodeText = (b: Uint8Array): string =>
  b[0] === 0xfe && b[1] === 0xff
    ? Buffer.from(b.subarray(2, b.length - (b.length % 2)))
        .swap16()
        .toString('utf16le')
    : Buffer.from(b).toString('latin1');

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
