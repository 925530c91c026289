// Ingest: decides whether an upload is a PDF we accept. Guarantees:
// - cheap checks run first on the calling thread: empty, over `maxBytes` (413 file_too_large), not starting with
//   "%PDF-" at byte 0 (strict: no leading junk), no "%%EOF" in the last 1 KB (truncated upload);
// - everything that parses runs in a worker thread under a time limit (default 10 s), and any failure there,
//   hang or crash included, is 400 invalid_file with meta.reason: the process never sees a hostile PDF's parse.
//   This module is the calling thread's side and loads no PDF library; the parse is ingest.work.ts;
// - both parsers we rely on later must accept the file: pdf-lib (we rewrite it) and pdf.js (we read its text),
//   and they must agree on the page count (a forged /Count is refused);
// - refused: encrypted files (any /Encrypt in the trailer, even with an empty user password), zero pages, more
//   than `maxPages` (default 500: a signing document beyond that is almost surely a mistake, and every later
//   step is linear in pages);
// - accepted as they are: forms (kept, not flattened), rotated pages, and existing signatures — those are
//   reported in hasSignatures because our placement and stamping rewrite the file and so invalidate them.
import { MAX_FILE_BYTES, MAX_PDF_PAGES } from '../../limits.js';
import { apiError, ApiError } from '../../lib/errors.js';
import { runPdfTaskOr } from './pool.js';
import type { PageInfo } from './types.js';

export const INSPECT_TIMEOUT_MS = 10_000;

export type InspectOptions = { maxBytes?: number; maxPages?: number; timeoutMs?: number };

export type PdfInspection = {
  pageCount: number;
  /** Page sizes as shown (after rotation), in points. */
  pages: PageInfo[];
  /** SHA-256 of the bytes as uploaded, lowercase hex. */
  sha256: string;
  hasForm: boolean;
  /** The file carries at least one signed signature field; our changes will invalidate it. */
  hasSignatures: boolean;
};

export type InvalidFileReason =
  'empty' | 'not_pdf' | 'truncated' | 'damaged' | 'encrypted' | 'no_pages' | 'too_many_pages' | 'timeout';

export function invalidFile(
  reason: InvalidFileReason,
  message?: string,
  extra: Record<string, unknown> = {},
): ApiError {
  return apiError('invalid_file', { message, meta: { reason, ...extra } });
}

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const EOF_MARK = Buffer.from('%%EOF');

/** The checks that need no parsing; throws the ApiError for the first that fails. */
export function checkPdfEnvelope(bytes: Uint8Array, maxBytes = MAX_FILE_BYTES): void {
  if (bytes.byteLength === 0) throw invalidFile('empty', 'The file is empty.');
  if (bytes.byteLength > maxBytes) {
    throw apiError('file_too_large', {
      message: `The file is ${bytes.byteLength} bytes; the limit is ${maxBytes} bytes.`,
      meta: { max_bytes: maxBytes, size: bytes.byteLength },
    });
  }
  if (bytes.byteLength < PDF_MAGIC.length || PDF_MAGIC.some((b, i) => bytes[i] !== b)) {
    throw invalidFile('not_pdf', 'The file does not start with %PDF-.');
  }
  const tail = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(-1024);
  if (tail.indexOf(EOF_MARK) < 0)
    throw invalidFile('truncated', 'The file has no %%EOF marker near its end; it looks truncated.');
}

export async function inspectPdf(bytes: Uint8Array, opts: InspectOptions = {}): Promise<PdfInspection> {
  checkPdfEnvelope(bytes, opts.maxBytes ?? MAX_FILE_BYTES);
  return runPdfTaskOr<PdfInspection>(
    { op: 'inspect', bytes, maxPages: opts.maxPages ?? MAX_PDF_PAGES },
    opts.timeoutMs ?? INSPECT_TIMEOUT_MS,
    (kind) =>
      kind === 'timeout'
        ? invalidFile('timeout', 'The PDF took too long to read.')
        : invalidFile('damaged', 'The PDF could not be read.'),
  );
}
