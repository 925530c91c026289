// The service's PKI: a local CA issuing the seal and TSA certificates, generated once under DATA_DIR/pki.
// Guarantees: a generation is published with one directory rename, so concurrent first starts agree on one CA
// (the loser discards its own and loads the winner's); an existing directory is only ever read, never
// regenerated. All keys are ECDSA P-256 (fast to sign, verified by openssl and by pdfsig through NSS).
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { Clock } from '../lib/clock.js';
import { derToPem, importSigningKey, parseCert, pemToDer, randomSerial, serialHexOf, toHex } from './cms.js';
import type { CrlIssuer } from './crl.js';
import { createLocalTsa, type LocalTsa } from './local-tsa.js';
import { loadP12 } from './p12.js';
import type { SealIdentity } from './types.js';

export type { SealIdentity, Tsa, TimestampResult } from './types.js';

export type Pki = {
  seal: SealIdentity;
  localTsa: LocalTsa;
  caCertPem: string;
  caCertDer: Uint8Array;
  /** The local CA's signing side, for CRLs. */
  ca: CrlIssuer;
};

export type PkiOptions = {
  dataDir: string;
  clock: Clock;
  /** Path of a PKCS#12 file holding the seal key, certificate and chain; replaces the generated seal identity. */
  sealP12?: string;
  sealP12Password?: string;
  /**
   * The service's public base URL: certificates generated now point at `<base>/pki/crl` (CRL distribution point)
   * and `<base>/pki/ca.crt` (authority information access). Certificates generated before keep what they have.
   */
  publicBaseUrl?: string;
};

const VALIDITY_MS = 10 * 365.25 * 24 * 3600 * 1000;
// Certificates start a little in the past so verifiers whose clocks lag ours still accept fresh ones.
const BACKDATE_MS = 10 * 60 * 1000;
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIG_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;

const FILES = ['ca.crt', 'ca.key', 'seal.crt', 'seal.key', 'tsa.crt', 'tsa.key'] as const;
// id-kp-documentSigning (RFC 9336) plus emailProtection, which NSS (pdfsig) requires of a signer certificate.
const SEAL_EKU = ['1.3.6.1.5.5.7.3.36', '1.3.6.1.5.5.7.3.4'];

export async function loadOrCreatePki(opts: PkiOptions): Promise<Pki> {
  const dir = join(opts.dataDir, 'pki');
  if (!(await exists(join(dir, 'ca.crt')))) await generate(opts.dataDir, dir, opts.clock, opts.publicBaseUrl);
  const files = await readAll(dir);

  const caDer = pemToDer(files['ca.crt']);
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
      chainDer: [caDer],
      privateKey: await importSigningKey(pemToDer(files['seal.key'])),
      serialHex: serialHexOf(parseCert(certDer)),
    };
  }
  return {
    seal,
    localTsa,
    caCertPem: derToPem(caDer, 'CERTIFICATE'),
    caCertDer: caDer,
    ca: { caCertDer: caDer, caKey: await importSigningKey(pemToDer(files['ca.key'])) },
  };
}

/**
 * The local CA alone (certificate and CRL key), generating the PKI on first use: what the public CRL route and the
 * verifier need, without reading the seal identity.
 */
export async function loadOrCreateCa(opts: PkiOptions): Promise<{ caCertDer: Uint8Array; ca: CrlIssuer }> {
  const dir = join(opts.dataDir, 'pki');
  if (!(await exists(join(dir, 'ca.crt')))) await generate(opts.dataDir, dir, opts.clock, opts.publicBaseUrl);
  const caCertDer = pemToDer(await readFile(join(dir, 'ca.crt'), 'utf8'));
  const caKey = await importSigningKey(pemToDer(await readFile(join(dir, 'ca.key'), 'utf8')));
  return { caCertDer, ca: { caCertDer, caKey } };
}

async function readAll(dir: string): Promise<Record<(typeof FILES)[number], string>> {
  const out = {} as Record<(typeof FILES)[number], string>;
  const missing: string[] = [];
  for (const f of FILES) {
    try {
      out[f] = await readFile(join(dir, f), 'utf8');
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

async function generate(dataDir: string, dir: string, clock: Clock, publicBaseUrl?: string): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const tmp = await mkdtemp(join(dataDir, '.pki-')); // mode 0700
  try {
    const now = clock.now();
    const validity = { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + VALIDITY_MS) };
    const install = toHex(webcrypto.getRandomValues(new Uint8Array(4)));

    const caKeys = await genKeys();
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      ...validity,
      serialNumber: toHex(randomSerial()),
      // The installation id keeps names distinct when several Signet CAs meet in one trust store.
      name: `CN=Signet Local CA, OU=Installation ${install}, O=Signet`,
      keys: caKeys,
      signingAlgorithm: SIG_ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });

    // Where a validator finds the current CRL and the issuer certificate (public routes of the service).
    const base = publicBaseUrl?.replace(/\/+$/, '');
    const pointers = base
      ? [
          new x509.CRLDistributionPointsExtension([`${base}/pki/crl`]),
          new x509.AuthorityInfoAccessExtension({ caIssuers: new x509.GeneralName('url', `${base}/pki/ca.crt`) }),
        ]
      : [];
    const issue = async (cn: string, usages: x509.KeyUsageFlags, eku: x509.ExtendedKeyUsageExtension) => {
      const keys = await genKeys();
      const cert = await x509.X509CertificateGenerator.create({
        ...validity,
        serialNumber: toHex(randomSerial()),
        subject: `CN=${cn}, OU=Installation ${install}, O=Signet`,
        issuer: ca.subject,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        signingAlgorithm: SIG_ALG,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, false),
          new x509.KeyUsagesExtension(usages, true),
          eku,
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
          await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
          ...pointers,
        ],
      });
      return { cert, keys };
    };
    const seal = await issue(
      'Signet Document Seal',
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation,
      new x509.ExtendedKeyUsageExtension(SEAL_EKU, false),
    );
    // RFC 3161 §2.3: a TSA certificate carries exactly the timeStamping purpose, marked critical.
    const tsa = await issue(
      'Signet Local TSA',
      x509.KeyUsageFlags.digitalSignature,
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.timeStamping], true),
    );

    const keyPem = async (k: CryptoKey) =>
      derToPem(new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', k)), 'PRIVATE KEY');
    await writeFile(join(tmp, 'ca.crt'), ca.toString('pem') + '\n', { mode: 0o644 });
    await writeFile(join(tmp, 'ca.key'), await keyPem(caKeys.privateKey), { mode: 0o600 });
    await writeFile(join(tmp, 'seal.crt'), seal.cert.toString('pem') + '\n', { mode: 0o644 });
    await writeFile(join(tmp, 'seal.key'), await keyPem(seal.keys.privateKey), { mode: 0o600 });
    await writeFile(join(tmp, 'tsa.crt'), tsa.cert.toString('pem') + '\n', { mode: 0o644 });
    await writeFile(join(tmp, 'tsa.key'), await keyPem(tsa.keys.privateKey), { mode: 0o600 });

    try {
      // Atomic publish; replaces an empty dir, fails with ENOTEMPTY/EEXIST when another process won.
      await rename(tmp, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

const genKeys = () => webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
