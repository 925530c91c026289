// The PKI's private key files (ca.key, seal.key, tsa.key of every generation) at rest. With a keyring they hold
// `enc:v1:…` (lib/secret-box.ts) with the file's path under DATA_DIR as authenticated data, so a key file copied
// over another does not open; without one, PEM. Reading accepts both, so a DATA_DIR from before encryption still loads.
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import {
  decryptSecret,
  encryptSecret,
  isCurrent,
  isEncrypted,
  SecretKeyError,
  type Keyring,
} from '../lib/secret-box.js';

export const KEY_FILES = ['ca.key', 'seal.key', 'tsa.key'] as const;

const identityOf = (dataDir: string, file: string) => relative(dataDir, file).split(sep).join('/');

/** What a key file written now holds: the PEM, encrypted when there is a keyring. */
export const keyFileText = (dataDir: string, file: string, pem: string, ring: Keyring | null): string =>
  ring ? encryptSecret(ring, 'pki-key', identityOf(dataDir, file), pem) : pem;

/** The PEM a key file's text holds; one line naming the file when it cannot be opened. */
export function openKeyFile(dataDir: string, file: string, text: string, ring: Keyring | null): string {
  try {
    return decryptSecret(ring, 'pki-key', identityOf(dataDir, file), text);
  } catch (err) {
    if (!(err instanceof SecretKeyError)) throw err;
    throw new SecretKeyError(`cannot open ${file}: ${err.message}; start with the key it was encrypted under`);
  }
}

export const readKeyFile = async (dataDir: string, file: string, ring: Keyring | null): Promise<string> =>
  openKeyFile(dataDir, file, await readFile(file, 'utf8'), ring);

/**
 * Brings every generation's key files to the keyring's primary key (plain ones encrypted, ones under another key of
 * the ring re-encrypted), each replaced with one rename. Throws SecretKeyError (naming the file) for one it cannot
 * open. Returns how many files were rewritten.
 */
export async function sealKeyFiles(dataDir: string, ring: Keyring): Promise<number> {
  let n = 0;
  for (const g of await existingGenerations(dataDir)) {
    for (const name of KEY_FILES) {
      const file = join(g.dir, name);
      const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
      if (text === null || isCurrent(ring, text)) continue;
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, keyFileText(dataDir, file, openKeyFile(dataDir, file, text, ring), ring), { mode: 0o600 });
      await rename(tmp, file);
      n++;
    }
  }
  return n;
}

/** The generations on disk, oldest first (none before the first start): the first in pki/, later ones in pki/gen-<n>. */
export async function existingGenerations(dataDir: string): Promise<{ n: number; dir: string }[]> {
  const root = join(dataDir, 'pki');
  const names = await readdir(root).catch(() => [] as string[]);
  if (!names.includes('ca.crt')) return [];
  const later = names
    .map((name) => /^gen-(\d+)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ n: Number(m[1]), dir: join(root, m[0]) }))
    .sort((a, b) => a.n - b.n);
  return [{ n: 1, dir: root }, ...later];
}

/** Whether any generation's key file is stored encrypted. */
export async function anyEncryptedKeyFile(dataDir: string): Promise<boolean> {
  for (const g of await existingGenerations(dataDir)) {
    for (const name of KEY_FILES) {
      const text = await readFile(join(g.dir, name), 'utf8').catch(() => '');
      if (isEncrypted(text)) return true;
    }
  }
  return false;
}
