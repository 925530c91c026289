// CRLs of the local CA. Guarantees: thisUpdate is the issuing second (UTCTime has no fractions), so a CRL issued
// after a timestamp of the local TSA (also whole seconds) is never dated before it; the CRL number is the issuing
// time in milliseconds, increasing across processes that share the CA without coordination. The local CA revokes
// nothing, so every CRL is empty; its worth is the signed statement "not revoked as of thisUpdate".
import * as x509 from '@peculiar/x509';
import * as asn1js from 'asn1js';
import type { Clock } from '../lib/clock.js';
import { ab } from './cms.js';

/** How long a CRL is valid, and how old the published one may get before it is reissued. */
export const CRL_VALIDITY_MS = 7 * 24 * 3600_000;
export const CRL_REISSUE_AFTER_MS = 24 * 3600_000;

export type CrlIssuer = { caCertDer: Uint8Array; caKey: CryptoKey };

export async function issueCrl(ca: CrlIssuer, atMs: number): Promise<Uint8Array> {
  const caCert = new x509.X509Certificate(ab(ca.caCertDer));
  const thisUpdate = new Date(Math.floor(atMs / 1000) * 1000);
  const crlNumber = new asn1js.Integer({ value: 0 });
  crlNumber.valueBlock.valueHexView = bigIntBytes(BigInt(Math.floor(atMs)));
  const crl = await x509.X509CrlGenerator.create({
    issuer: caCert.subject,
    thisUpdate,
    nextUpdate: new Date(thisUpdate.getTime() + CRL_VALIDITY_MS),
    entries: [],
    signingKey: ca.caKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [
      await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
      new x509.Extension('2.5.29.20', false, ab(new Uint8Array(crlNumber.toBER()))),
    ],
  });
  return new Uint8Array(crl.rawData);
}

/** The published CRL, reissued once it is older than CRL_REISSUE_AFTER_MS (well before its nextUpdate). */
export function createCrlPublisher(ca: CrlIssuer, clock: Clock): { current(): Promise<Uint8Array> } {
  let cached: { der: Uint8Array; at: number } | null = null;
  let pending: Promise<Uint8Array> | null = null;
  return {
    async current() {
      const now = clock.now();
      if (cached && now >= cached.at && now - cached.at < CRL_REISSUE_AFTER_MS) return cached.der;
      pending ??= issueCrl(ca, now)
        .then((der) => {
          cached = { der, at: now };
          return der;
        })
        .finally(() => (pending = null));
      return pending;
    },
  };
}

function bigIntBytes(n: bigint): Uint8Array {
  let hex = n.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  if (parseInt(hex.slice(0, 2), 16) & 0x80) hex = '00' + hex;
  return new Uint8Array(Buffer.from(hex, 'hex'));
}
