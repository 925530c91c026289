// PDF and PNG generators for tests (any module's). Everything is built with pdf-lib and zlib, except
// `encrypt: true`, which shells out to `qpdf --encrypt` (poppler-utils and qpdf are on every project machine) and
// falls back to a hand-made /Encrypt trailer entry when qpdf is missing: either way the result is a PDF that
// declares itself encrypted.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import {
  degrees,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFString,
  type PDFFont,
  rgb,
  StandardFonts,
} from 'pdf-lib';

/** A line of text; `split` draws it in pieces (alternating fonts, so pdf.js reports separate text items). */
export type FixtureText =
  string | { text: string; x?: number; y?: number; size?: number; split?: number[]; white?: boolean };

export type MakePdfOptions = {
  pages?: number;
  /** Lines per page (index 0 = page 1); without x/y they flow from the top-left margin, 24 pt apart. */
  text?: FixtureText[][];
  /** One angle for every page, or one per page. */
  rotate?: number | number[];
  /** [width, height] in points; default US Letter. */
  size?: [number, number];
  /** [x, y, width, height] CropBox for every page. */
  cropBox?: [number, number, number, number];
  /** An AcroForm with a text field on page 1. */
  withForm?: boolean;
  /** A signed signature field on page 1 (a /Sig value with a zeroed /Contents: looks signed, verifies nothing). */
  withSignatureField?: boolean;
  encrypt?: boolean;
  /** Save with object streams (pdf-lib's default) instead of a classic xref table. */
  objectStreams?: boolean;
};

export async function makePdf(o: MakePdfOptions = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const [w, h] = o.size ?? [612, 792];
  const fonts: PDFFont[] = [
    await doc.embedFont(StandardFonts.Helvetica),
    await doc.embedFont(StandardFonts.HelveticaBold),
  ];
  const pages = Math.max(o.pages ?? 1, o.text?.length ?? 0);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([w, h]);
    const rot = Array.isArray(o.rotate) ? o.rotate[i] : o.rotate;
    if (rot) page.setRotation(degrees(rot));
    if (o.cropBox) page.setCropBox(...o.cropBox);
    const lines = o.text?.[i] ?? [];
    lines.forEach((line, n) => {
      const l = typeof line === 'string' ? { text: line } : line;
      const size = l.size ?? 12;
      const y = l.y ?? h - 72 - n * 24;
      let x = l.x ?? 72;
      const color = l.white ? rgb(1, 1, 1) : rgb(0, 0, 0);
      const cuts = [0, ...(l.split ?? []), l.text.length];
      for (let k = 0; k + 1 < cuts.length; k++) {
        const piece = l.text.slice(cuts[k], cuts[k + 1]);
        const font = fonts[k % 2];
        page.drawText(piece, { x, y, size, font, color });
        x += font.widthOfTextAtSize(piece, size);
      }
    });
  }
  if (o.withForm) {
    const form = doc.getForm();
    const field = form.createTextField('company');
    field.setText('ACME');
    field.addToPage(doc.getPage(0), { x: 72, y: 100, width: 200, height: 20 });
  }
  if (o.withSignatureField) addSignedField(doc);
  let bytes = await doc.save({ useObjectStreams: o.objectStreams ?? false });
  if (o.encrypt) bytes = await encryptPdf(bytes);
  return bytes;
}

function addSignedField(doc: PDFDocument): void {
  const ctx = doc.context;
  const sigValue = ctx.obj({
    Type: 'Sig',
    Filter: 'Adobe.PPKLite',
    SubFilter: 'adbe.pkcs7.detached',
    ByteRange: [0, 0, 0, 0],
    Contents: PDFHexString.of('00'.repeat(64)),
    M: PDFString.fromDate(new Date(Date.UTC(2024, 0, 1))),
  });
  const widget = ctx.obj({
    Type: 'Annot',
    Subtype: 'Widget',
    FT: 'Sig',
    T: PDFString.of('Signature1'),
    Rect: [0, 0, 0, 0],
    F: 132,
    V: ctx.register(sigValue),
    P: doc.getPage(0).ref,
  });
  const widgetRef = ctx.register(widget);
  doc.getPage(0).node.addAnnot(widgetRef);
  const acro = ctx.obj({ Fields: [widgetRef], SigFlags: 3 });
  doc.catalog.set(PDFName.of('AcroForm'), ctx.register(acro));
}

let qpdfMissing: boolean | undefined;

/** Encrypts with an empty user password (opens without asking in any viewer). */
export async function encryptPdf(bytes: Uint8Array): Promise<Uint8Array> {
  if (!qpdfMissing) {
    const dir = mkdtempSync(path.join(tmpdir(), 'signet-enc-'));
    try {
      writeFileSync(path.join(dir, 'in.pdf'), bytes);
      execFileSync('qpdf', ['--encrypt', '', 'owner-secret', '256', '--', 'in.pdf', 'out.pdf'], {
        cwd: dir,
        stdio: 'ignore',
      });
      return new Uint8Array(readFileSync(path.join(dir, 'out.pdf')));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      qpdfMissing = true;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const doc = await PDFDocument.load(bytes);
  const enc = doc.context.obj({
    Filter: 'Standard',
    V: 1,
    R: 2,
    O: PDFHexString.of('00'.repeat(32)),
    U: PDFHexString.of('00'.repeat(32)),
    P: PDFNumber.of(-4),
  });
  doc.context.trailerInfo.Encrypt = doc.context.register(enc);
  return doc.save({ useObjectStreams: false });
}

/** Pseudo-random bytes (deterministic for a seed) that are not a PDF. */
export function makeGarbage(size = 4096, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s & 0xff;
  }
  return out;
}

/**
 * A valid one-page PDF with an attachment of random bytes so the file is at least `bytes` long. The attachment is
 * stored uncompressed (pdf-lib's `attach` deflates it: seconds of a test's CPU for nothing, random bytes do not shrink).
 */
export async function makeBigPdf(bytes: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage([612, 792]);
  const ctx = doc.context;
  const file = ctx.register(
    ctx.stream(makeGarbage(bytes, 7), { Type: 'EmbeddedFile', Subtype: 'application/octet-stream' }),
  );
  const spec = ctx.register(
    ctx.obj({
      Type: 'Filespec',
      F: PDFString.of('padding.bin'),
      UF: PDFHexString.fromText('padding.bin'),
      EF: { F: file },
    }),
  );
  doc.catalog.set(PDFName.of('Names'), ctx.obj({ EmbeddedFiles: { Names: [PDFString.of('padding.bin'), spec] } }));
  return doc.save({ useObjectStreams: false });
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * An RGBA PNG; `pixel(x, y)` gives [r, g, b, a] (default: a dark diagonal stroke on transparent). `declared`
 * overrides the size written in IHDR, to make PNGs that lie about their dimensions.
 */
export function makePng(
  width: number,
  height: number,
  pixel: (x: number, y: number) => [number, number, number, number] = (x, y) =>
    Math.abs(x * height - y * width) < Math.max(width, height) * 2 ? [20, 20, 80, 255] : [0, 0, 0, 0],
  declared?: { width: number; height: number },
): Uint8Array {
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 4 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 4);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(declared?.width ?? width, 0);
  ihdr.writeUInt32BE(declared?.height ?? height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(
    Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', new Uint8Array(0))]),
  );
}
