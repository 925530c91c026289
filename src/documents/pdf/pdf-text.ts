// PDF text strings (ISO 32000-1 §7.9.2.2) without a PDF library: printable ASCII as is (a subset of PDFDocEncoding),
// anything else as UTF-16BE with a byte-order mark, so every name and reason survives intact. Both the byte-level
// writers (signature-field.ts) and pdf-lib callers (seal.work.ts) use it.

/** The bytes of `s` as a PDF text string. */
export function pdfTextBytes(s: string): Uint8Array {
  if (/^[\x20-\x7e]*$/.test(s)) return new Uint8Array(Buffer.from(s, 'latin1'));
  return new Uint8Array(Buffer.from('\ufeff' + s, 'utf16le').swap16());
}

/**
 * Body of a PDF literal string (what goes between the parentheses, e.g. for pdf-lib's PDFString.of, which writes it
 * verbatim): escaped ASCII when possible, else UTF-16BE with a BOM as octal escapes.
 */
export function pdfText(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return s.replace(/[\\()]/g, (c) => '\\' + c);
  let out = '';
  for (const b of pdfTextBytes(s)) out += '\\' + b.toString(8).padStart(3, '0');
  return out;
}

/** A PDF date (§7.9.4) in UTC: D:YYYYMMDDHHmmSSZ. */
export function pdfDate(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `D:${iso.slice(0, 19).replace(/[-T:]/g, '')}Z`;
}
