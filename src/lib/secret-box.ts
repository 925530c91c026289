// Secrets at rest: AES-256-GCM under a key derived per purpose from the master key (HKDF-SHA256, its own `info` per
// purpose), a random 96-bit nonce per value, and the value's identity (a row id, a file's path) as additional
// authenticated data, so a ciphertext moved to another row or file does not open. Stored form:
// `enc:v1:<key id>:<base64(nonce ‖ ciphertext ‖ tag)>`; anything without the prefix is a plain value (written before
// encryption, or without a key) and is returned as it is. The key id names the master key without revealing it.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

export type SecretPurpose = 'hook-secret' | 'pki-key';

type DerivedKey = { id: string; keys: Record<SecretPurpose, Buffer> };

/** The key values are written under (`primary`) and every key values may still be under (by key id). */
export type Keyring = { primary: DerivedKey; byId: Map<string, DerivedKey> };

/** A stored value that names a key this keyring lacks, or that does not authenticate under its key. */
export class SecretKeyError extends Error {}

const PREFIX = 'enc:v1:';
const derive = (master: Buffer, info: string, bytes: number): Buffer =>
  Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, bytes));

/** The id a master key's values carry: 8 hex characters derived from it (not the key's own bytes). */
export const keyIdOf = (master: Buffer): string =>
  createHash('sha256')
    .update(derive(master, 'signet/key-id/v1', 32))
    .digest('hex')
    .slice(0, 8);

function deriveAll(master: Buffer): DerivedKey {
  return {
    id: keyIdOf(master),
    keys: {
      'hook-secret': derive(master, 'signet/hook-secret/v1', 32),
      'pki-key': derive(master, 'signet/pki-key/v1', 32),
    },
  };
}

/** A keyring writing under `primary` that also opens values under `others` (a rotation in progress). */
export function keyringOf(primary: Buffer, others: Buffer[] = []): Keyring {
  const p = deriveAll(primary);
  const byId = new Map([[p.id, p]]);
  for (const o of others.map(deriveAll)) if (!byId.has(o.id)) byId.set(o.id, o);
  return { primary: p, byId };
}

/** The key id an encrypted value names, or null for a plain value. */
export function storedKeyId(stored: string): string | null {
  if (!stored.startsWith(PREFIX)) return null;
  const end = stored.indexOf(':', PREFIX.length);
  return end < 0 ? '' : stored.slice(PREFIX.length, end);
}

export const isEncrypted = (stored: string): boolean => stored.startsWith(PREFIX);

const aadOf = (purpose: SecretPurpose, identity: string) => Buffer.from(`signet/${purpose}\n${identity}`, 'utf8');

export function encryptSecret(ring: Keyring, purpose: SecretPurpose, identity: string, plain: string): string {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', ring.primary.keys[purpose], nonce);
  c.setAAD(aadOf(purpose, identity));
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `${PREFIX}${ring.primary.id}:${Buffer.concat([nonce, body, c.getAuthTag()]).toString('base64')}`;
}

/** The plain value; a plain stored value is returned as it is. Throws SecretKeyError when it cannot be opened. */
export function decryptSecret(ring: Keyring | null, purpose: SecretPurpose, identity: string, stored: string): string {
  const id = storedKeyId(stored);
  if (id === null) return stored;
  const key = ring?.byId.get(id);
  if (!key) throw new SecretKeyError(`it is encrypted under key id ${id}, which is not the configured key`);
  const raw = Buffer.from(stored.slice(PREFIX.length + id.length + 1), 'base64');
  try {
    const d = createDecipheriv('aes-256-gcm', key.keys[purpose], raw.subarray(0, 12));
    d.setAAD(aadOf(purpose, identity));
    d.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
  } catch {
    throw new SecretKeyError(`it does not authenticate under key id ${id} (altered, or moved from elsewhere)`);
  }
}

/** Whether `stored` is already what this keyring writes (encrypted under its primary key). */
export const isCurrent = (ring: Keyring, stored: string): boolean => storedKeyId(stored) === ring.primary.id;
