// The service's PKI: a local CA issuing the seal and TSA certificates, generated under DATA_DIR/pki (generate.ts).
// Guarantees: an existing generation is only ever read, never regenerated; concurrent first starts agree on one CA.
// Generations: the first lives in DATA_DIR/pki itself, later ones in DATA_DIR/pki/gen-<n>. When the newest one's TSA
// certificate has less than PKI_ROLL_BEFORE_MS left, the next use creates generation n+1 (a new CA, seal and TSA),
// so a document timestamp taken for renewal always has years ahead of it. Every generation's CA stays trusted and
// keeps signing CRLs for the certificates it issued.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import { derToPem, importSigningKey, parseCert, pemToDer, serialHexOf } from './cms.js';
import type { CrlIssuer } from './crl.js';
import { generate, PKI_FILES } from './generate.js';
import { createLocalTsa, type LocalTsa } from './local-tsa.js';
import { loadP12 } from './p12.js';
import { existingGenerations, openKeyFile, readKeyFile } from './key-files.js';
import type { Keyring } from '../lib/secret-box.js';
import type { SealIdentity } from './types.js';

export type { SealIdentity, Tsa, TimestampResult } from './types.js';

/** A new generation is made when the newest TSA certificate has less than this left. */
export const PKI_ROLL_BEFORE_MS = 2 * 365 * 24 * 3600_000;

/** One generation's CA: its number, certificate and CRL key. */
export type CaGeneration = { n: number; caCertDer: Uint8Array; ca: CrlIssuer };

export type Pki = {
  seal: SealIdentity;
  localTsa: LocalTsa;
  caCertPem: string;
  caCertDer: Uint8Array;
  /** The newest generation's CA signing side, for CRLs. */
  ca: CrlIssuer;
  /** The newest generation's number. */
  generation: number;
  /** Every generation's CA, oldest first: all are trusted, each signs CRLs for what it issued. */
  cas: CaGeneration[];
  /** When the next generation is due (epoch ms). */
  rollAt: number;
};

export type PkiOptions = {
  dataDir: string;
  clock: Clock;
  /** Path of a PKCS#12 file holding the seal key, certificate and chain; replaces the generated seal identity. */
  sealP12?: string;
  sealP12Password?: string;
  /**
   * The service's public base URL: certificates generated now point at their CA's CRL and certificate routes
   * (generate.ts, publishedPaths). Certificates generated before keep what they have.
   */
  publicBaseUrl?: string;
  /** Encrypts the key files written and opens encrypted ones (key-files.ts); without it they are PEM. */
  keyring?: Keyring | null;
};

const key = (opts: PkiOptions): Keyring | null => opts.keyring ?? null;

/** The newest generation, creating the first (or the next, when due) as needed. */
export async function loadOrCreatePki(opts: PkiOptions): Promise<Pki> {
  let gens = await generationDirs(opts);
  const newest = await readAll(opts, gens.at(-1)!.dir);
  const tsaNotAfter = parseCert(pemToDer(newest['tsa.crt'])).notAfter.value.getTime();
  if (opts.clock.now() >= tsaNotAfter - PKI_ROLL_BEFORE_MS) {
    const n = gens.at(-1)!.n + 1;
    const dir = join(opts.dataDir, 'pki', `gen-${n}`);
    await generate(opts.dataDir, dir, opts.clock, n, opts.publicBaseUrl, key(opts));
    gens = await generationDirs(opts);
  }
  const last = gens.at(-1)!;
  const files = await readAll(opts, last.dir);
  const cas = await Promise.all(gens.map((g) => readCa(opts, g.n, g.dir)));
  const ca = cas.at(-1)!;
  const tsaCertDer = pemToDer(files['tsa.crt']);
  const localTsa = createLocalTsa({
    certDer: tsaCertDer,
    privateKey: await importSigningKey(pemToDer(files['tsa.key'])),
    clock: opts.clock,
  });

  let seal: SealIdentity;
  if (opts.sealP12) {
    seal = await loadP12(await readFile(opts.sealP12), opts.sealP12Password ?? '');
  } else {
    const certDer = pemToDer(files['seal.crt']);
    seal = {
      certDer,
      chainDer: [ca.caCertDer],
      privateKey: await importSigningKey(pemToDer(files['seal.key'])),
      serialHex: serialHexOf(parseCert(certDer)),
    };
  }
  return {
    seal,
    localTsa,
    caCertPem: derToPem(ca.caCertDer, 'CERTIFICATE'),
    caCertDer: ca.caCertDer,
    ca: ca.ca,
    generation: last.n,
    cas,
    rollAt: parseCert(tsaCertDer).notAfter.value.getTime() - PKI_ROLL_BEFORE_MS,
  };
}

/** The PKI as of now: the loaded one until its next generation is due, then that one. */
export function createPkiManager(opts: PkiOptions): { current(): Promise<Pki> } {
  let loaded: Promise<Pki> | null = null;
  return {
    async current() {
      const pki = await (loaded ??= loadOrCreatePki(opts).catch((err) => {
        loaded = null;
        throw err;
      }));
      if (opts.clock.now() < pki.rollAt) return pki;
      loaded = null;
      return (loaded = loadOrCreatePki(opts));
    },
  };
}

/**
 * Every generation's CA (certificate and CRL key), creating the first on first use: what the public CRL routes and
 * the verifier need, without reading a seal identity.
 */
export async function loadOrCreateCas(opts: PkiOptions): Promise<CaGeneration[]> {
  return Promise.all((await generationDirs(opts)).map((g) => readCa(opts, g.n, g.dir)));
}

/** The generation numbers on disk (none before the first start). */
export const generationNumbers = async (dataDir: string): Promise<number[]> =>
  (await existingGenerations(dataDir)).map((g) => g.n);

async function readCa(opts: PkiOptions, n: number, dir: string): Promise<CaGeneration> {
  const caCertDer = pemToDer(await readFile(join(dir, 'ca.crt'), 'utf8'));
  const caKey = await importSigningKey(pemToDer(await readKeyFile(opts.dataDir, join(dir, 'ca.key'), key(opts))));
  return { n, caCertDer, ca: { caCertDer, caKey } };
}

/** The generations on disk, oldest first; the first is created when there is none. */
async function generationDirs(opts: PkiOptions): Promise<{ n: number; dir: string }[]> {
  const dir = join(opts.dataDir, 'pki');
  if (!(await exists(join(dir, 'ca.crt'))))
    await generate(opts.dataDir, dir, opts.clock, 1, opts.publicBaseUrl, key(opts));
  const gens = await existingGenerations(opts.dataDir);
  // A pki/ without ca.crt (another process's was not published here): read as the first, reported incomplete.
  return gens.length > 0 ? gens : [{ n: 1, dir }];
}

/** A generation's files, key files opened (PEM). */
async function readAll(opts: PkiOptions, dir: string): Promise<Record<(typeof PKI_FILES)[number], string>> {
  const out = {} as Record<(typeof PKI_FILES)[number], string>;
  const missing: string[] = [];
  for (const f of PKI_FILES) {
    try {
      const text = await readFile(join(dir, f), 'utf8');
      out[f] = f.endsWith('.key') ? openKeyFile(opts.dataDir, join(dir, f), text, key(opts)) : text;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(f);
    }
  }
  if (missing.length > 0) {
    throw new Error(
      `${dir} is incomplete (missing ${missing.join(', ')}); restore it from a backup, or remove the directory to create a new CA`,
    );
  }
  return out;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
