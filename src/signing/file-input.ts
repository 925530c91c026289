// A PDF an API caller gives: `file` (base64, decoded here) or `file_url` (fetched under the outbound rule). Used by
// the signing-request and placement-preview calls and by template versions. Guarantee: nothing over the file limit
// is ever decoded, and a bad value is a catalogued 400/413.
import { apiError } from '../lib/errors.js';
import { MAX_FILE_BYTES } from '../limits.js';
import type { FileIn } from './signing.schemas.js';
import { BASE64, invalid, type SigningDeps } from './signing.service.js';

/** An uploaded file's bytes; refuses empty files, bad base64 and anything over the file limit without decoding it. */
export function decodeFile(file: FileIn): Uint8Array {
  // Copies only when there is whitespace to remove: the value may be 33 MB.
  const b64 = /\s/.test(file.content_base64) ? file.content_base64.replace(/\s+/g, '') : file.content_base64;
  if (b64.length === 0)
    throw apiError('invalid_file', { message: 'The file is empty.', meta: { field: 'file.content_base64' } });
  if (!BASE64.test(b64) || b64.length % 4 === 1)
    throw invalid('file.content_base64', 'file.content_base64 is not valid base64.');
  if ((b64.length * 3) / 4 > MAX_FILE_BYTES + 3)
    throw apiError('file_too_large', { meta: { max_bytes: MAX_FILE_BYTES } });
  const decoded = Buffer.from(b64, 'base64');
  // A large decode owns its memory: view it rather than copy it (a small one may sit in Node's shared pool).
  const bytes =
    decoded.byteLength === decoded.buffer.byteLength ? new Uint8Array(decoded.buffer) : new Uint8Array(decoded);
  if (bytes.byteLength > MAX_FILE_BYTES) throw apiError('file_too_large', { meta: { max_bytes: MAX_FILE_BYTES } });
  return bytes;
}

/** Exactly one of `file` (base64) or `file_url` (fetched under the outbound rule). */
export async function fileOf(deps: SigningDeps, body: { file?: FileIn; file_url?: string }): Promise<Uint8Array> {
  if ((body.file === undefined) === (body.file_url === undefined))
    throw invalid('file', 'Give exactly one of file or file_url.');
  return body.file ? decodeFile(body.file) : deps.files.fetch(body.file_url!);
}
