import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** Constant-time string equality (length differences return false without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

const SEALED = 'enc1:';

/** AES-256-GCM of `text` under a 32-byte key: `enc1:` + base64(iv ‖ tag ‖ ciphertext). */
export function sealText(key: Buffer, text: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([c.update(text, 'utf8'), c.final()]);
  return SEALED + Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
}

/** The text `sealText` sealed, or null when the key is not the one it was sealed with (or the value is not sealed). */
export function openText(key: Buffer, sealed: string): string | null {
  if (!sealed.startsWith(SEALED)) return null;
  const raw = Buffer.from(sealed.slice(SEALED.length), 'base64');
  try {
    const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}
