// CMS building blocks shared by the seal and the TSA: OIDs, the ESS signing-certificate-v2 attribute, key import.
// Everything here is pure and thread-agnostic, so it runs the same on the main thread and in seal workers.
import { createHash, createPublicKey, createPrivateKey, webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  extKeyUsage: '2.5.29.37',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecPublicKey: '1.2.840.10045.2.1',
} as const;

const HASH_BY_OID: Record<string, string> = {
  [OID.sha1]: 'sha1',
  [OID.sha256]: 'sha256',
  [OID.sha384]: 'sha384',
  [OID.sha512]: 'sha512',
};

/** Node hash name for a digest AlgorithmIdentifier OID, or null if we do not accept it. */
export const hashNameForOid = (oid: string): string | null => HASH_BY_OID[oid] ?? null;

export const sha256 = (data: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest());

export const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean =>
  a.byteLength === b.byteLength &&
  Buffer.compare(
    Buffer.from(a.buffer, a.byteOffset, a.byteLength),
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  ) === 0;

/** An exact ArrayBuffer for APIs (pkijs, asn1js) that ignore a view's offset. */
export const ab = (b: Uint8Array): ArrayBuffer =>
  b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

export const parseCert = (der: Uint8Array): pkijs.Certificate => pkijs.Certificate.fromBER(ab(der));

/**
 * Serial as lowercase hex of its magnitude: DER sign-padding zero bytes stripped, always whole bytes. This is
 * the form `openssl x509 -serial` prints (lowercased), so operators can match it.
 */
export function serialHexOf(cert: pkijs.Certificate): string {
  const v = cert.serialNumber.valueBlock.valueHexView;
  let i = 0;
  while (i < v.length - 1 && v[i] === 0) i++;
  return toHex(v.subarray(i));
}

/** Random positive 128-bit serial whose first byte is 0x40..0x7f: no sign padding, no leading zero nibble. */
export function randomSerial(): Uint8Array {
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = 0x40 | (b[0] & 0x3f);
  return b;
}

export const attr = (type: string, value: asn1js.AsnType): pkijs.Attribute =>
  new pkijs.Attribute({ type, values: [value] });

/**
 * ESS signing-certificate-v2 (RFC 5035) naming `cert` by SHA-256 hash plus issuer and serial. The hash
 * algorithm is the DEFAULT (SHA-256), so it is omitted as DER requires.
 */
export function signingCertificateV2(cert: pkijs.Certificate, certDer: Uint8Array): pkijs.Attribute {
  const issuerSerial = new asn1js.Sequence({
    value: [
      new pkijs.GeneralNames({ names: [new pkijs.GeneralName({ type: 4, value: cert.issuer })] }).toSchema(),
      new asn1js.Integer({ valueHex: ab(cert.serialNumber.valueBlock.valueHexView) }),
    ],
  });
  const essCertIdV2 = new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: ab(sha256(certDer)) }), issuerSerial],
  });
  return attr(
    OID.signingCertificateV2,
    new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] }),
  );
}

/** The certHash values named by an ESS signing-certificate (v1) or -v2 attribute value, with their hash names. */
export function essCertHashes(attribute: pkijs.Attribute): { hash: string; value: Uint8Array }[] {
  const out: { hash: string; value: Uint8Array }[] = [];
  const certs = (attribute.values[0] as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence;
  for (const id of certs.valueBlock.value as asn1js.Sequence[]) {
    const parts = id.valueBlock.value;
    let hash = attribute.type === OID.signingCertificate ? 'sha1' : 'sha256';
    let k = 0;
    if (attribute.type === OID.signingCertificateV2 && parts[0] instanceof asn1js.Sequence) {
      const alg = new pkijs.AlgorithmIdentifier({ schema: parts[0] });
      const name = hashNameForOid(alg.algorithmId);
      if (!name) throw new Error(`unsupported ESS certHash algorithm ${alg.algorithmId}`);
      hash = name;
      k = 1;
    }
    out.push({ hash, value: new Uint8Array((parts[k] as asn1js.OctetString).valueBlock.valueHexView) });
  }
  return out;
}

/** The certificate among `certs` that a SignerInfo's sid names (issuer and serial, or subject key identifier). */
export function findSigner(si: pkijs.SignerInfo, certs: pkijs.Certificate[]): pkijs.Certificate | undefined {
  if (si.sid instanceof pkijs.IssuerAndSerialNumber) {
    const sid = si.sid;
    return certs.find((c) => c.issuer.isEqual(sid.issuer) && c.serialNumber.isEqual(sid.serialNumber));
  }
  // subjectKeyIdentifier [0]: match the SKI extension.
  const keyId = new Uint8Array((si.sid as asn1js.Primitive).valueBlock.valueHexView);
  return certs.find((c) => {
    const ski = c.extensions?.find((e) => e.extnID === '2.5.29.14');
    return ski && bytesEqual(new Uint8Array((ski.parsedValue as asn1js.OctetString).valueBlock.valueHexView), keyId);
  });
}

/** Imports a PKCS#8 private key for signing, choosing the WebCrypto algorithm from the key itself (RSA or EC). */
export async function importSigningKey(pkcs8Der: Uint8Array, extractable = false): Promise<CryptoKey> {
  const info = pkijs.PrivateKeyInfo.fromBER(ab(pkcs8Der));
  const algId = info.privateKeyAlgorithm.algorithmId;
  if (algId === OID.rsaEncryption) {
    return webcrypto.subtle.importKey('pkcs8', pkcs8Der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, extractable, [
      'sign',
    ]);
  }
  if (algId === OID.ecPublicKey) {
    const curveOid = (info.privateKeyAlgorithm.algorithmParams as asn1js.ObjectIdentifier).valueBlock.toString();
    const namedCurve = (
      { '1.2.840.10045.3.1.7': 'P-256', '1.3.132.0.34': 'P-384', '1.3.132.0.35': 'P-521' } as Record<string, string>
    )[curveOid];
    if (!namedCurve) throw new Error(`unsupported EC curve ${curveOid}`);
    return webcrypto.subtle.importKey('pkcs8', pkcs8Der, { name: 'ECDSA', namedCurve }, extractable, ['sign']);
  }
  throw new Error(`unsupported private key algorithm ${algId}`);
}

/** True when the PKCS#8 private key belongs to the certificate (compares the derived SubjectPublicKeyInfo). */
export function keyMatchesCert(pkcs8Der: Uint8Array, certDer: Uint8Array): boolean {
  const spki = createPublicKey(createPrivateKey({ key: Buffer.from(pkcs8Der), format: 'der', type: 'pkcs8' })).export({
    format: 'der',
    type: 'spki',
  });
  const certSpki = parseCert(certDer).subjectPublicKeyInfo.toSchema().toBER();
  return bytesEqual(new Uint8Array(spki), new Uint8Array(certSpki));
}

export const pemToDer = (pem: string): Uint8Array =>
  new Uint8Array(Buffer.from(pem.replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, '').replace(/\s+/g, ''), 'base64'));

export const derToPem = (der: Uint8Array, label: string): string => {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
};

/**
 * The certificates a CMS SignedData (a signature or an RFC 3161 token) carries, its signer's first, followed by
 * `extra` (known issuers); duplicates dropped. Garbage yields `extra` alone.
 */
export function cmsCertificates(cmsDer: Uint8Array, extra: Uint8Array[] = []): Uint8Array[] {
  const out: Uint8Array[] = [];
  try {
    const sd = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(ab(cmsDer)).content });
    const certs = (sd.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
    const sid = sd.signerInfos[0]?.sid;
    const isSigner = (c: pkijs.Certificate) =>
      sid instanceof pkijs.IssuerAndSerialNumber &&
      c.issuer.isEqual(sid.issuer) &&
      c.serialNumber.isEqual(sid.serialNumber);
    certs.sort((a, b) => Number(isSigner(b)) - Number(isSigner(a)));
    for (const c of certs) out.push(new Uint8Array(c.toSchema().toBER()));
  } catch {
    // Not a SignedData: nothing to add.
  }
  for (const e of extra) out.push(e);
  return [...new Map(out.map((d) => [toHex(sha256(d)), d])).values()];
}

const ALGORITHM_NAMES: Record<string, string> = {
  [OID.sha1]: 'sha1',
  [OID.sha256]: 'sha256',
  [OID.sha384]: 'sha384',
  [OID.sha512]: 'sha512',
  '1.2.840.10045.4.3.2': 'ecdsa-with-sha256',
  '1.2.840.10045.4.3.3': 'ecdsa-with-sha384',
  '1.2.840.10045.4.3.4': 'ecdsa-with-sha512',
  '1.2.840.113549.1.1.11': 'sha256-with-rsa',
  '1.2.840.113549.1.1.12': 'sha384-with-rsa',
  '1.2.840.113549.1.1.13': 'sha512-with-rsa',
  '1.2.840.113549.1.1.10': 'rsassa-pss',
  '1.2.840.113549.1.1.5': 'sha1-with-rsa',
};

/** Lowercase names of a CMS signer's digest and signature algorithms (dotted OIDs when unnamed); [] for garbage. */
export function cmsAlgorithms(cmsDer: Uint8Array): string[] {
  try {
    const sd = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(ab(cmsDer)).content });
    const si = sd.signerInfos[0];
    return [si.digestAlgorithm.algorithmId, si.signatureAlgorithm.algorithmId].map((o) => ALGORITHM_NAMES[o] ?? o);
  } catch {
    return [];
  }
}
