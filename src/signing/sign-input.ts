// What a signer submits when signing, checked before anything is written: the visible signature (a typed name or a
// drawn PNG: real base64, at most MAX_PNG_BYTES, PNG magic) and their fields' values under the document's rules.
// The simple signature (signing.service.ts) and the qualified one (qes/) take the same input through here.
import { checkSignerValues, templateInputError } from '../documents/fields.js';
import type { Field } from '../documents/pdf/types.js';
import { apiError } from '../lib/errors.js';
import { MAX_PNG_BYTES } from '../limits.js';
import type { SignBody } from './signer.schemas.js';
import type { DocumentRow, RequestRow } from './signing.repo.js';

export const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  apiError('invalid_request', { message, meta: { field, ...extra } });

export const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function drawnSignature(body: SignBody): Uint8Array | null {
  if (body.signature.type === 'typed') {
    if (body.signature.text.trim() === '') throw invalid('signature.text', 'The typed signature is empty.');
    return null;
  }
  const b64 = body.signature.png_base64.replace(/^data:image\/png;base64,/, '');
  if (!BASE64.test(b64)) throw invalid('signature.png_base64', 'signature.png_base64 is not valid base64.');
  const png = new Uint8Array(Buffer.from(b64, 'base64'));
  if (png.byteLength > MAX_PNG_BYTES) throw invalid('signature.png_base64', 'The drawn signature is over 2 MB.');
  if (png.byteLength < 8 || !Buffer.from(png.subarray(0, 8)).equals(PNG_MAGIC))
    throw invalid('signature.png_base64', 'The drawn signature is not a PNG image.');
  return png;
}

/** What a signer gives: the visible signature (`png`: a drawn one's image, checked) and their fields' values. */
export type SignInput = {
  signature: SignBody['signature'];
  png: Uint8Array | null;
  values: Record<string, string | number | boolean>;
};

/** The signer's fields and values checked against the document's rules (422 template_input_invalid otherwise). */
export function checkSignInput(doc: DocumentRow, r: RequestRow, body: SignBody, png: Uint8Array | null): SignInput {
  const fields = (JSON.parse(doc.fields) as Field[]).filter((f) => f.role === r.role);
  const checked = checkSignerValues(fields, body.fields);
  if (checked.problems.length > 0) throw templateInputError(checked.problems);
  const values = Object.fromEntries(Object.entries(checked.values).map(([id, v]) => [id, v.value]));
  return { signature: body.signature, png, values };
}
