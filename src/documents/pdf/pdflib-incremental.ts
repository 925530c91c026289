// pdf-lib edits saved as ONE incremental update of the bytes they were loaded from (incremental.ts), instead of a
// rewrite: the input stays a byte prefix of the output, so signatures already in the file keep verifying.
// How: right after load, a hash of every indirect object's serialization; after the edits (and pdf-lib's flush, which
// writes fonts, images and content streams), every object whose serialization changed or that is new is appended;
// the trailer keeps the file's /Root, /Info and /ID. Objects the edits delete are not marked free (stamping and the
// audit page delete none). Worker side only: it loads pdf-lib (through the caller's PDFDocument).
import { createHash } from 'node:crypto';
import { Update } from './incremental.js';
import { PdfFile } from './pdf-file.js';
import type { PDFDocument, PDFObject } from './pdf-lib.js';
import { PdfRef } from './pdf-syntax.js';

/** The original file (its xref read byte-level) and each indirect object's serialization hash as loaded. */
export type PdfLibSnapshot = { file: PdfFile; hashes: Map<string, string> };

function bytesOf(obj: PDFObject): Uint8Array {
  const out = new Uint8Array(obj.sizeInBytes());
  obj.copyBytesInto(out, 0);
  return out;
}

const hash = (b: Uint8Array) => createHash('sha256').update(b).digest('base64');

/** Call right after PDFDocument.load(original), before any edit. */
export function snapshotObjects(doc: PDFDocument, original: Uint8Array): PdfLibSnapshot {
  const file = new PdfFile(original);
  // pdf-lib does not register object and xref streams, so it would hand out their numbers to new objects: start
  // new numbers at the file's /Size instead.
  doc.context.largestObjectNumber = Math.max(doc.context.largestObjectNumber, file.size - 1);
  const hashes = new Map<string, string>();
  for (const [ref, obj] of doc.context.enumerateIndirectObjects())
    hashes.set(`${ref.objectNumber} ${ref.generationNumber}`, hash(bytesOf(obj)));
  return { file, hashes };
}

/** The edits made to `doc` since `snap`, appended to the bytes `doc` was loaded from. */
export async function saveIncremental(doc: PDFDocument, snap: PdfLibSnapshot): Promise<Uint8Array> {
  await doc.flush();
  const up = new Update(snap.file);
  const changed = doc.context
    .enumerateIndirectObjects()
    .map(([ref, obj]) => ({ ref, bytes: bytesOf(obj) }))
    .filter(({ ref, bytes }) => snap.hashes.get(`${ref.objectNumber} ${ref.generationNumber}`) !== hash(bytes))
    .sort((a, b) => a.ref.objectNumber - b.ref.objectNumber);
  if (changed.length === 0) return new Uint8Array(snap.file.bytes);
  for (const { ref, bytes } of changed) {
    // pdf-lib numbers new objects after the largest it parsed; the trailer's /Size must cover them.
    while (up.size <= ref.objectNumber) up.ref();
    up.setRaw(new PdfRef(ref.objectNumber, ref.generationNumber), Buffer.from(bytes).toString('latin1'));
  }
  return up.append().pdf;
}
