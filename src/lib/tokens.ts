// One-time link tokens: signer links, review links, embed sessions, dashboard set-password and invitation links, and
// dashboard session cookies. Each is 32 random bytes in base64url (256 bits); only its SHA-256 is stored, so a
// database leak yields no working link, and a token exists only in the message or answer that carries it.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from './crypto.js';

const SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A fresh token and the hash to store in its place. */
export const newLinkToken = (): { token: string; hash: string } => {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256Hex(token) };
};

/** The stored hash of a presented token; null for anything not shaped like one of ours, so junk never reaches SQL. */
export const linkTokenHash = (token: string): string | null => (SHAPE.test(token) ? sha256Hex(token) : null);
