import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

export const hmacSha256Hex = (key: string, message: string | Buffer): string =>
  createHmac('sha256', key).update(message).digest('hex');

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
