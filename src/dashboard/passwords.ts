// Dashboard passwords: scrypt (memory-hard; node's own, no native addon), a random 16-byte salt per password, the
// parameters stored with the hash so they can be raised later without breaking old hashes. Never a fast hash.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Message } from './words.js';

const scrypt = (password: string, salt: Buffer, keylen: number, o: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, o, (err, key) => (err ? reject(err) : resolve(key))),
  );

/** N = 2^15, r = 8, p = 1: 32 MiB and roughly 50–100 ms per hash on this class of machine. */
const PARAMS = { N: 32768, r: 8, p: 1 } as const;
const KEYLEN = 32;
const maxmem = (N: number, r: number) => 128 * N * r * 2;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

/** A new password's hash; `params` other than the default only for hashes made as they were under older ones. */
export async function hashPassword(
  password: string,
  params: { N: number; r: number; p: number } = PARAMS,
): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEYLEN, { ...params, maxmem: maxmem(params.N, params.r) });
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: maxmem(Number(n), Number(r)),
  });
  return timingSafeEqual(key, expected);
}

let dummy: Promise<string> | undefined;
/** A hash to compare against when the account does not exist, so both cases cost the same time (made on first use). */
export const dummyHash = (): Promise<string> => (dummy ??= hashPassword(randomBytes(16).toString('hex')));

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): Message | null {
  if ([...password].length < MIN_PASSWORD_LENGTH)
    return { key: 'password.tooShort', vars: { count: MIN_PASSWORD_LENGTH } };
  if (password.length > MAX_PASSWORD_LENGTH) return { key: 'password.tooLong', vars: { count: MAX_PASSWORD_LENGTH } };
  return null;
}
