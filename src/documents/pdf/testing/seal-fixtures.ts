// Seal test helpers: text PDFs of any length, and the raw pieces of a PDF signature (ByteRange, the signed
// bytes, the CMS in /Contents) so external tools (openssl, pdfsig) can check them.
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** `pages` A4 pages of 50 text lines each, saved the way pdf-lib does by default (object streams). */
export async function makeTextPdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([595, 842]);
    for (let l = 0; l < 50; l++) {
      page.drawText(`Page ${i + 1}, line ${l + 1}: the quick brown fox jumps over the lazy dog.`, {
        x: 40,
        y: 800 - l * 15,
        size: 9,
        font,
      });
    }
  }
  return doc.save();
}

export type ExtractedSignature = {
  byteRange: [number, number, number, number];
  /** The two signed ranges, concatenated. */
  signedBytes: Buffer;
  /** The CMS from /Contents, trimmed of its zero padding by the DER length. */
  cmsDer: Buffer;
};

/** The last signature in the file (read textually, the way a byte-level verifier would). */
export function extractSignature(pdf: Uint8Array): ExtractedSignature {
  const buf = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const text = buf.toString('latin1');
  const ranges = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)];
  if (ranges.length === 0) throw new Error('no /ByteRange');
  const [a, b, c, d] = ranges[ranges.length - 1].slice(1, 5).map(Number) as [number, number, number, number];
  const signedBytes = Buffer.concat([buf.subarray(a, a + b), buf.subarray(c, c + d)]);
  const hex = text.slice(a + b, c);
  if (!hex.startsWith('<') || !hex.endsWith('>')) throw new Error('the gap between the ranges is not a hex string');
  const raw = Buffer.from(hex.slice(1, -1), 'hex');
  return { byteRange: [a, b, c, d], signedBytes, cmsDer: raw.subarray(0, derLength(raw)) };
}

function derLength(der: Buffer): number {
  const first = der[1];
  if (first < 0x80) return 2 + first;
  const n = first & 0x7f;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + der[2 + i];
  return 2 + n + len;
}
