// `signet secrets rotate`: every stored secret re-encrypted under a new master key. Run it with Signet stopped (a
// running process keeps the key it started with). Guarantees: it can be run again after an interruption and
// finishes the same rotation (values under either key are accepted and brought under the new one); on the SQLite
// default the new key is written to DATA_DIR/secret.key.new first and replaces secret.key only once everything is
// under it, so the key every value needs is always on disk. With SIGNET_SECRET_KEY the new key comes from a file and
// the operator then sets SIGNET_SECRET_KEY to it: Signet never stores that key.
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSecretKey, type Config } from '../config.js';
import type { Db } from '../db/db.js';
import { keyIdOf, keyringOf } from '../lib/secret-box.js';
import { bringUnder, KEY_FILE, NEW_KEY_FILE, resolveKeys, SecretsError } from './keyring.js';

export type Rotation = {
  key_id: string;
  previous_key_id: string;
  hooks: number;
  key_files: number;
  /** Where the new key was written (SQLite default), or null: set SIGNET_SECRET_KEY to it. */
  key_file: string | null;
};

export async function rotateSecrets(config: Config, db: Db, newKeyFile: string | null): Promise<Rotation> {
  const keys = await resolveKeys(config);
  if (!keys) throw new SecretsError('SIGNET_SECRET_KEY is not set: there is no key to rotate from');
  const given = newKeyFile ? parseSecretKey('--new-key-file', await readKeyText(newKeyFile)) : null;
  if (config.secretKey) {
    if (!given) throw new SecretsError('SIGNET_SECRET_KEY is set: give the new key with --new-key-file <path>');
    return rotateTo(config, db, given, config.secretKey, null);
  }
  // The SQLite default: first finish a rotation that was interrupted, then rotate from its key.
  await bringUnder(keyringOf(keys.primary, keys.others), config.dataDir, db, keys.source);
  if (keys.pending) await rename(keys.pending, join(config.dataDir, KEY_FILE));
  const next = given ?? randomBytes(32);
  const pending = join(config.dataDir, NEW_KEY_FILE);
  await writeFile(`${pending}.tmp`, `${next.toString('base64')}\n`, { mode: 0o600 });
  await rename(`${pending}.tmp`, pending);
  const r = await rotateTo(config, db, next, keys.primary, join(config.dataDir, KEY_FILE));
  await rename(pending, join(config.dataDir, KEY_FILE));
  return r;
}

async function rotateTo(config: Config, db: Db, next: Buffer, previous: Buffer, keyFile: string | null) {
  if (keyIdOf(next) === keyIdOf(previous)) throw new SecretsError('the new key is the current key');
  const ring = keyringOf(next, [previous]);
  const counts = await bringUnder(ring, config.dataDir, db, 'the new key');
  return {
    key_id: ring.primary.id,
    previous_key_id: keyIdOf(previous),
    hooks: counts.hooks,
    key_files: counts.keyFiles,
    key_file: keyFile,
  };
}

async function readKeyText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new SecretsError(`cannot read --new-key-file ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}
