// Generating one generation of the local PKI: a CA and the seal and TSA certificates it issues, all ECDSA P-256
// (fast to sign, verified by openssl and by pdfsig through NSS), valid ten years from the injected clock. A
// generation is published with one directory rename, so concurrent generators agree on one (the loser discards its
// own). Certificates name where their CA publishes its CRL and certificate (publishedPaths), when the base URL is known.
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { Clock } from '../lib/clock.js';
import { derToPem, randomSerial, toHex } from './cms.js';
import type { Keyring } from '../lib/secret-box.js';
import { keyFileText } from './key-files.js';

/** The public routes of generation `n`'s CA: the first keeps the short paths its certificates already name. */
export const publishedPaths = (n: number) =>
  n === 1 ? { crl: '/pki/crl', ca: '/pki/ca.crt' } : { crl: `/pki/crl/${n}`, ca: `/pki/ca/${n}.crt` };

export const VALIDITY_MS = 10 * 365.25 * 24 * 3600 * 1000;
// Certificates start a little in the past so verifiers whose clocks lag ours still accept fresh ones.
const BACKDATE_MS = 10 * 60 * 1000;
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIG_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;

export const PKI_FILES = ['ca.crt', 'ca.key', 'seal.crt', 'seal.key', 'tsa.crt', 'tsa.key'] as const;
// id-kp-documentSigning (RFC 9336) plus emailProtection, which NSS (pdfsig) requires of a signer certificate.
const SEAL_EKU = ['1.3.6.1.5.5.7.3.36', '1.3.6.1.5.5.7.3.4'];

/**
 * Generates generation `n` (CA, seal and TSA certificates) and publishes it at `dir` with one rename; when another
 * process published first, its generation stays and this one is discarded.
 */
export async function generate(
  dataDir: string,
  dir: string,
  clock: Clock,
  n: number,
  publicBaseUrl?: string,
  keyring: Keyring | null = null,
): Promise<void> {
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
      name: `CN=Signet Local CA${n > 1 ? ` ${n}` : ''}, OU=Installation ${install}, O=Signet`,
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
          new x509.CRLDistributionPointsExtension([`${base}${publishedPaths(n).crl}`]),
          new x509.AuthorityInfoAccessExtension({
            caIssuers: new x509.GeneralName('url', `${base}${publishedPaths(n).ca}`),
          }),
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

    // Encrypted for the path it is published at (`dir`), the authenticated data of its ciphertext.
    const keyPem = async (k: CryptoKey, name: string) =>
      keyFileText(
        dataDir,
        join(dir, name),
        derToPem(new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', k)), 'PRIVATE KEY'),
        keyring,
      );
    await writeFile(join(tmp, 'ca.crt'), ca.toString('pem') + '\n', { mode: 0o644 });
    await writeFile(join(tmp, 'ca.key'), await keyPem(caKeys.privateKey, 'ca.key'), { mode: 0o600 });
    await writeFile(join(tmp, 'seal.crt'), seal.cert.toString('pem') + '\n', { mode: 0o644 });
    await writeFile(join(tmp, 'seal.key'), await keyPem(seal.keys.privateKey, 'seal.key'), { mode: 0o600 });
    await writeFile(join(tmp, 'tsa.crt'), tsa.cert.toString('pem') + '\n', { mode: 0o644 });
    await writeFile(join(tmp, 'tsa.key'), await keyPem(tsa.keys.privateKey, 'tsa.key'), { mode: 0o600 });

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
