// Finds a PDF's signatures and what changed after them, on the raw revisions (pdf-file.ts), never on a rewritten
// file. A signature is a /Sig field whose value has a /ByteRange that starts at 0, leaves out exactly its own
// /Contents string and ends where one revision ends. After the last (approval) signature, a revision may only add
// what PAdES adds: DSS dictionaries and their streams, document timestamps (field, widget, value), the catalog,
// AcroForm and field list growing by those, and a page's /Annots growing by their widgets. Anything else, and any
// deleted object, counts as a modification.
import { createHash } from 'node:crypto';
import type { PdfFile } from './pdf-file.js';
import { dictOf, nameOf, PdfDict, PdfRef, PdfStream, PdfString, serialize, type PdfValue } from './pdf-syntax.js';

export type FoundSignature = {
  kind: 'signature' | 'document_timestamp';
  field: string;
  subFilter: string | null;
  byteRange: number[];
  /** The DER in /Contents, zero padding removed. */
  contents: Uint8Array;
  /** /M, the claimed signing time, as written. */
  claimedTime: string | null;
  /** Index of the xref section whose revision the signature closes, or -1 when its range ends elsewhere. */
  revision: number;
  /** The range is well formed: starts at 0, skips exactly /Contents, ends at a revision end. */
  rangeOk: boolean;
  revisionSha256: string;
};

const text = (v: PdfValue | undefined): string | null => {
  if (!(v instanceof PdfString)) return null;
  const b = v.bytes;
  if (b[0] === 0xfe && b[1] === 0xff) return Buffer.from(b.subarray(2)).swap16().toString('utf16le');
  return Buffer.from(b).toString('latin1');
};

/** Every signature field with a value, in file order (by where its signed range ends). */
export function findSignatures(file: PdfFile): FoundSignature[] {
  const catalog = file.dict(file.trailer.get('Root'));
  const form = file.dict(catalog?.get('AcroForm'));
  const out: FoundSignature[] = [];
  const seen = new Set<string>();
  const visit = (f: PdfValue | undefined, parentName: string, depth: number) => {
    if (depth > 32) return;
    if (f instanceof PdfRef) {
      if (seen.has(f.key)) return;
      seen.add(f.key);
    }
    const d = file.dict(f);
    if (!d) return;
    const name = [parentName, text(d.get('T'))].filter(Boolean).join('.');
    const kids = file.resolve(d.get('Kids'));
    if (Array.isArray(kids)) for (const k of kids) visit(k, name, depth + 1);
    const v = file.dict(d.get('V'));
    if (nameOf(d.get('FT')) !== 'Sig' || !v) return;
    const found = describe(file, v, name);
    if (found) out.push(found);
  };
  const fields = file.resolve(form?.get('Fields'));
  if (Array.isArray(fields)) for (const f of fields) visit(f, '', 0);
  return out.sort((a, b) => end(a) - end(b));
}

const end = (s: FoundSignature) => (s.byteRange.length === 4 ? s.byteRange[2] + s.byteRange[3] : 0);

function describe(file: PdfFile, v: PdfDict, field: string): FoundSignature | null {
  const range = file.resolve(v.get('ByteRange'));
  const contents = file.resolve(v.get('Contents'));
  if (!Array.isArray(range) || !(contents instanceof PdfString)) return null;
  const byteRange = range.map((x) => (typeof x === 'number' ? x : -1));
  const kind = nameOf(v.get('Type')) === 'DocTimeStamp' ? 'document_timestamp' : 'signature';
  const b = file.bytes;
  let rangeOk =
    byteRange.length === 4 &&
    byteRange.every((x) => Number.isInteger(x) && x >= 0) &&
    byteRange[0] === 0 &&
    byteRange[1] < byteRange[2] &&
    byteRange[2] + byteRange[3] <= b.length;
  // The gap must be exactly the hex string /Contents <...>.
  if (rangeOk) rangeOk = b[byteRange[1]] === 0x3c && b[byteRange[2] - 1] === 0x3e;
  const stop = byteRange[2] + byteRange[3];
  const revision = file.sections.findIndex((s) => s.end === stop || trimmedEnd(b, s.end) === stop);
  if (revision < 0) rangeOk = false;
  return {
    kind,
    field,
    subFilter: nameOf(v.get('SubFilter')) ?? null,
    byteRange,
    contents: stripPadding(contents.bytes),
    claimedTime: text(v.get('M')),
    revision,
    rangeOk,
    revisionSha256: rangeOk ? createHash('sha256').update(b.subarray(0, stop)).digest('hex') : '',
  };
}

/** A revision end without its final end-of-line (some writers sign up to %%EOF only). */
function trimmedEnd(b: Uint8Array, at: number): number {
  let e = at;
  while (e > 0 && (b[e - 1] === 0x0a || b[e - 1] === 0x0d)) e--;
  return e;
}

/** The DER inside zero-padded /Contents: its outer length says where it ends. */
function stripPadding(b: Uint8Array): Uint8Array {
  if (b.length < 2 || b[0] !== 0x30) return b;
  let len = b[1];
  let head = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) return b;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[2 + i];
    head += n;
  }
  return head + len <= b.length ? b.subarray(0, head + len) : b;
}

/** One change beyond DSS and document timestamps: what kind of object, which one. */
export type Change = { what: 'page' | 'annotation' | 'object'; object: number; deleted: boolean };

/** The changes revisions after `afterRevision` make beyond DSS and document timestamps. */
export function changesAfter(file: PdfFile, afterRevision: number): Change[] {
  const problems: Change[] = [];
  for (let i = afterRevision + 1; i < file.sections.length; i++) {
    const allowed = allowedObjects(file, i);
    for (const [num, e] of file.sections[i].entries) {
      if (num === 0) continue;
      if (e.kind === 'free') {
        if (file.entry(num, i - 1)?.kind !== 'free' && file.entry(num, i - 1) !== undefined)
          problems.push({ what: 'object', object: num, deleted: true });
        continue;
      }
      const check = allowed.get(num);
      const value = file.object(num, i);
      if (value instanceof PdfStream && ['XRef', 'ObjStm'].includes(nameOf(value.dict.get('Type')) ?? '')) continue;
      if (check === true) continue;
      const previous = file.object(num, i - 1);
      if (check && previous !== undefined && check(previous, value)) continue;
      problems.push({ what: kindOf(value), object: num, deleted: false });
    }
  }
  return problems;
}

type Check = true | ((before: PdfValue, after: PdfValue | undefined) => boolean);

/** What revision `i` may write: new DSS/timestamp objects freely, existing ones only through their check. */
function allowedObjects(file: PdfFile, i: number): Map<number, Check> {
  const allowed = new Map<number, Check>();
  const rootRef = file.sections[i].trailer.get('Root') ?? file.trailer.get('Root');
  const catalog = file.dict(rootRef, i);
  if (!catalog) return allowed;
  const docTsFields = new Set<string>();
  const isDocTsField = (f: PdfValue) => nameOf(file.dict(file.dict(f, i)?.get('V'), i)?.get('Type')) === 'DocTimeStamp';

  const form = catalog.get('AcroForm');
  const fields = file.resolve(file.dict(form, i)?.get('Fields'), i);
  if (Array.isArray(fields))
    for (const f of fields) {
      if (!(f instanceof PdfRef) || !isDocTsField(f)) continue;
      docTsFields.add(f.key);
      allowed.set(f.num, true);
      const v = file.dict(f, i)?.get('V');
      if (v instanceof PdfRef) allowed.set(v.num, true);
    }
  const fieldsGrew = (before: PdfValue, after: PdfValue | undefined) => {
    const b = Array.isArray(before) ? before : [];
    const a = Array.isArray(after) ? after : [];
    return growsBy(b, a, (x) => x instanceof PdfRef && docTsFields.has(x.key));
  };
  if (rootRef instanceof PdfRef)
    allowed.set(rootRef.num, (before, after) =>
      sameExcept(dictOf(before), dictOf(after), ['DSS', 'AcroForm', 'Extensions'], (k, b, a) =>
        k === 'AcroForm' ? formGrew(b, a) : true,
      ),
    );
  const formGrew = (before: PdfValue | undefined, after: PdfValue | undefined): boolean => {
    const b = before instanceof PdfRef ? file.dict(before, i - 1) : dictOf(before);
    const a = after instanceof PdfRef ? file.dict(after, i) : dictOf(after);
    if (!a) return !b;
    return sameExcept(b ?? new PdfDict(), a, ['Fields', 'SigFlags'], (k, x, y) =>
      k === 'Fields' ? fieldsGrew(file.resolve(x, i - 1) ?? [], file.resolve(y, i)) : true,
    );
  };
  if (form instanceof PdfRef) allowed.set(form.num, (before, after) => formGrew(before, after));
  const fieldsValue = file.dict(form, i)?.get('Fields');
  if (fieldsValue instanceof PdfRef) allowed.set(fieldsValue.num, fieldsGrew);

  const dss = catalog.get('DSS');
  const dssDict = file.dict(dss, i);
  if (dss instanceof PdfRef) allowed.set(dss.num, true);
  const markAll = (v: PdfValue | undefined, depth: number) => {
    if (depth > 4 || v === undefined) return;
    if (v instanceof PdfRef) {
      allowed.set(v.num, true);
      return markAll(file.object(v, i), depth + 1);
    }
    if (Array.isArray(v)) for (const x of v) markAll(x, depth + 1);
    else if (v instanceof PdfDict) for (const x of v.map.values()) markAll(x, depth + 1);
  };
  if (dssDict) for (const v of dssDict.map.values()) markAll(v, 0);

  // Pages whose /Annots grew by document-timestamp widgets.
  for (const [num] of file.sections[i].entries) {
    if (allowed.has(num)) continue;
    const page = dictOf(file.object(num, i));
    if (nameOf(page?.get('Type')) !== 'Page') continue;
    allowed.set(num, (before, after) =>
      sameExcept(dictOf(before), dictOf(after), ['Annots'], (_k, b, a) =>
        growsBy(
          (file.resolve(b, i - 1) as PdfValue[] | undefined) ?? [],
          (file.resolve(a, i) as PdfValue[] | undefined) ?? [],
          (x) => x instanceof PdfRef && docTsFields.has(x.key),
        ),
      ),
    );
  }
  return allowed;
}

/** `after` is `before` plus entries that pass `extra` (order kept). */
function growsBy(before: PdfValue[], after: PdfValue | undefined, extra: (x: PdfValue) => boolean): boolean {
  if (!Array.isArray(after) || after.length < before.length) return false;
  const b = before.map(serialize);
  if (!b.every((x, k) => x === serialize(after[k]))) return false;
  return after.slice(before.length).every(extra);
}

/** Both dictionaries hold the same entries, apart from `keys`, whose change `ok` judges. */
function sameExcept(
  before: PdfDict | undefined,
  after: PdfDict | undefined,
  keys: string[],
  ok: (key: string, before: PdfValue | undefined, after: PdfValue | undefined) => boolean,
): boolean {
  if (!before || !after) return false;
  const names = new Set([...before.map.keys(), ...after.map.keys()]);
  for (const k of names) {
    const b = before.get(k);
    const a = after.get(k);
    const same = b !== undefined && a !== undefined && serializeSafe(b) === serializeSafe(a);
    if (same) continue;
    if (!keys.includes(k) || !ok(k, b, a)) return false;
  }
  return true;
}

const serializeSafe = (v: PdfValue) => (v instanceof PdfStream ? `stream:${v.data.length}` : serialize(v));

function kindOf(v: PdfValue | undefined): Change['what'] {
  const d = dictOf(v);
  if (nameOf(d?.get('Type')) === 'Page') return 'page';
  if (nameOf(d?.get('Type')) === 'Annot' || (d?.get('Subtype') && d.get('Rect'))) return 'annotation';
  return 'object';
}
