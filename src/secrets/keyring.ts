// Where the master key of secrets at rest comes from, and bringing what is stored to it at start. Guarantees:
// - SIGNET_SECRET_KEY, when set, is the only key. Without it, on SQLite (the single-host default) the key lives in
//   DATA_DIR/secret.key, generated on first start (mode 0600, published with one link so concurrent first starts agree);
//   on PostgreSQL there is none: secrets stay plain, with a warning (the key must not live in the shared database).
// - Start never runs on wrong secrets: a stored value (hook secret, PKI key file) the key cannot open stops start
//   with one line naming the key ids. Plain values, and values under the other key of a rotation in progress, are
//   rewritten under the current key (each hook row compare-and-set, each key file with one rename).
// - DATA_DIR/secret.key.new is a rotation (rotate.ts) that did not finish: it is the current key and secret.key the
//   previous one until everything is under it; then it replaces secret.key.
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSecretKey, type Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { Logger } from '../lib/logger.js';
import { decryptSecret, encryptSecret, keyringOf, SecretKeyError, type Keyring } from '../lib/secret-box.js';
import { anyEncryptedKeyFile, sealKeyFiles } from '../pki/key-files.js';
import { afterRewrite, beforeRewrite } from '../db/overwrite.js';
import { anyEncryptedSecret, replaceSecret, secretsNotUnder } from '../webhooks/hooks.repo.js';

export const KEY_FILE = 'secret.key';
export const NEW_KEY_FILE = 'secret.key.new';

/** Start or rotation cannot go on with the key it has; the message is one line. */
export class SecretsError extends Error {}

export type MasterKeys = {
  primary: Buffer;
  /** Keys values may still be under (the previous key of an unfinished rotation). */
  others: Buffer[];
  /** Where the primary key comes from, for messages. */
  source: string;
  /** The unfinished rotation's key file, to move over secret.key once everything is under it. */
  pending: string | null;
};

/** The master key(s) as configured; null on PostgreSQL without SIGNET_SECRET_KEY. */
export async function resolveKeys(config: Config): Promise<MasterKeys | null> {
  if (config.secretKey) return { primary: config.secretKey, others: [], source: 'SIGNET_SECRET_KEY', pending: null };
  if (!config.databaseUrl.startsWith('sqlite:')) return null;
  const file = join(config.dataDir, KEY_FILE);
  const current = (await readKeyFile(file)) ?? (await createKeyFile(file));
  const pendingFile = join(config.dataDir, NEW_KEY_FILE);
  const pending = await readKeyFile(pendingFile);
  return pending
    ? { primary: pending, others: [current], source: pendingFile, pending: pendingFile }
    : { primary: current, others: [], source: file, pending: null };
}

async function readKeyFile(file: string): Promise<Buffer | null> {
  try {
    return parseSecretKey(file, await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SecretsError((err as Error).message);
  }
}

/** A new random key at `file` (0600); when another process published one first, that one. */
export async function createKeyFile(file: string, key = randomBytes(32)): Promise<Buffer> {
  const dir = join(file, '..');
  await mkdir(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, `${key.toString('base64')}\n`, { mode: 0o600 });
  try {
    await link(tmp, file);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return (await readKeyFile(file))!;
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * The keyring this process runs with, after every stored secret was brought under its key (or checked plain, with
 * a warning, when there is none). Throws SecretsError, one line, when a stored value cannot be opened.
 */
export async function prepareSecrets(config: Config, db: Db, logger?: Pick<Logger, 'warn'>): Promise<Keyring | null> {
  const keys = await resolveKeys(config);
  if (!keys) {
    const where = (await anyEncryptedSecret(db.kysely))
      ? 'webhook secrets in the database'
      : (await anyEncryptedKeyFile(config.dataDir))
        ? `PKI key files in ${config.dataDir}`
        : null;
    if (where) throw new SecretsError(`SIGNET_SECRET_KEY is not set but the ${where} are encrypted; set it`);
    logger?.warn({}, 'SIGNET_SECRET_KEY is not set: webhook secrets and PKI private keys are stored in plain text');
    return null;
  }
  const ring = keyringOf(keys.primary, keys.others);
  await bringUnder(ring, config.dataDir, db, keys.source);
  if (keys.pending) await rename(keys.pending, join(config.dataDir, KEY_FILE));
  return ring;
}

/** The configured keyring without touching the database (commands that only read the PKI). */
export async function configuredKeyring(config: Config): Promise<Keyring | null> {
  const keys = await resolveKeys(config);
  return keys && keyringOf(keys.primary, keys.others);
}

/** prepareSecrets for start-up: a database the caller opened for it (`own`) is closed when start stops here. */
export async function prepareSecretsOrClose(config: Config, db: Db, own: boolean, logger?: Pick<Logger, 'warn'>) {
  try {
    return await prepareSecrets(config, db, logger);
  } catch (err) {
    if (own) await db.close();
    throw err;
  }
}

/** Rewrites every stored secret not under the ring's primary key; returns the counts. */
export async function bringUnder(
  ring: Keyring,
  dataDir: string,
  db: Db,
  source: string,
): Promise<{ hooks: number; keyFiles: number }> {
  const cannot = (what: string, err: SecretKeyError) =>
    new SecretsError(`${source} (key id ${ring.primary.id}) cannot open ${what}: ${err.message}`);
  let hooks = 0;
  const rows = await secretsNotUnder(db.kysely, ring.primary.id);
  if (rows.length > 0) await beforeRewrite(db);
  await db.kysely.transaction().execute(async (trx) => {
    for (const row of rows) {
      let plain: string;
      try {
        plain = decryptSecret(ring, 'hook-secret', row.id, row.secret);
      } catch (err) {
        if (err instanceof SecretKeyError) throw cannot(`the secret of hook ${row.id}`, err);
        throw err;
      }
      if (await replaceSecret(trx, row.id, row.secret, encryptSecret(ring, 'hook-secret', row.id, plain))) hooks++;
    }
  });
  if (rows.length > 0) await afterRewrite(db);
  try {
    return { hooks, keyFiles: await sealKeyFiles(dataDir, ring) };
  } catch (err) {
    if (err instanceof SecretKeyError) throw cannot('a PKI key file', err);
    throw err;
  }
}
