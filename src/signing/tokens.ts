// Signer links carry a 256-bit random token; only its SHA-256 is stored, so a database leak yields no links.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../lib/crypto.js';

const SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const newSignerToken = (): { token: string; hash: string } => {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256Hex(token) };
};

/** Null for anything that is not one of our tokens, so junk never reaches the database. */
export const signerTokenHash = (token: string): string | null => (SHAPE.test(token) ? sha256Hex(token) : null);
