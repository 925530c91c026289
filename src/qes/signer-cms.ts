// A qualified signer's CMS (ETSI.CAdES.detached), built in two halves around the provider: signedAttributes() gives
// the DER the provider signs (its SHA-256 is the one hash the signer authorizes), assemble() wraps the returned
// signature value with the signer's chain and a signature timestamp. Guarantees: the attributes are exactly
// contentType, messageDigest (the PDF byte range's SHA-256) and signing-certificate-v2 naming the signer's certificate,
// so what was authorized is what is embedded; verifySignatureValue() checks the provider's answer against the
// certificate's public key before anything is written.
import { verify, X509Certificate, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { ab, attr, OID, parseCert, sha256, signingCertificateV2 } from '../pki/cms.js';

const SIGN_ALGO = {
  rsa: { csc: '1.2.840.113549.1.1.11', cms: OID.rsaEncryption },
  ec: { csc: '1.2.840.10045.4.3.2', cms: '1.2.840.10045.4.3.2' },
} as const;

export type KeyKind = keyof typeof SIGN_ALGO;

/** The signer certificate's key kind, or null for keys we cannot sign with (only RSA and EC are offered). */
export function keyKindOf(certDer: Uint8Array): KeyKind | null {
  const type = publicKeyOf(certDer)?.asymmetricKeyType;
  return type === 'rsa' ? 'rsa' : type === 'ec' ? 'ec' : null;
}

function publicKeyOf(certDer: Uint8Array): KeyObject | null {
  try {
    return new X509Certificate(Buffer.from(certDer)).publicKey;
  } catch {
    return null;
  }
}

/** The CSC `signAlgo` for a key kind (SHA-256 with RSA PKCS#1 v1.5, or ECDSA with SHA-256). */
export const cscSignAlgo = (kind: KeyKind): string => SIGN_ALGO[kind].csc;

/** DER of the signed attributes as signed (a SET), and the hash the provider must sign. */
export function signedAttributes(digest: Uint8Array, certDer: Uint8Array): { der: Uint8Array; hash: Uint8Array } {
  const cert = parseCert(certDer);
  const attrs = new pkijs.SignedAndUnsignedAttributes({
    type: 0,
    attributes: [
      attr(OID.contentType, new asn1js.ObjectIdentifier({ value: OID.data })),
      attr(OID.messageDigest, new asn1js.OctetString({ valueHex: ab(digest) })),
      signingCertificateV2(cert, certDer),
    ],
  });
  const der = new Uint8Array(attrs.toSchema().toBER());
  der[0] = 0x31; // [0] IMPLICIT in the SignerInfo; a SET when signed (RFC 5652 §5.4)
  return { der, hash: sha256(der) };
}

/** Whether `signature` is the certificate's key's signature over the signed attributes. */
export function verifySignatureValue(signedAttrsDer: Uint8Array, signature: Uint8Array, certDer: Uint8Array): boolean {
  try {
    const key = publicKeyOf(certDer);
    return key !== null && verify('sha256', signedAttrsDer, key, signature);
  } catch {
    return false;
  }
}

/** The ContentInfo (SignedData) to write into /Contents. `chainDer`: the signer's certificate first. */
export function assemble(o: {
  signedAttrsDer: Uint8Array;
  signature: Uint8Array;
  chainDer: Uint8Array[];
  kind: KeyKind;
  timestampToken: Uint8Array;
}): Uint8Array {
  const leaf = parseCert(o.chainDer[0]!);
  const set = asn1js.fromBER(ab(o.signedAttrsDer)).result as asn1js.Set;
  const signedAttrs = new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: set.valueBlock.value });
  const tst = new asn1js.Sequence({
    value: [
      new asn1js.ObjectIdentifier({ value: OID.signatureTimeStampToken }),
      new asn1js.Set({ value: [asn1js.fromBER(ab(o.timestampToken)).result] }),
    ],
  });
  const unsigned = new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 1 }, value: [tst] });
  const sigAlg =
    o.kind === 'rsa'
      ? new pkijs.AlgorithmIdentifier({ algorithmId: SIGN_ALGO.rsa.cms, algorithmParams: new asn1js.Null() })
      : new pkijs.AlgorithmIdentifier({ algorithmId: SIGN_ALGO.ec.cms });
  const sha = new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 });
  const signerInfo = new asn1js.Sequence({
    value: [
      new asn1js.Integer({ value: 1 }),
      new pkijs.IssuerAndSerialNumber({ issuer: leaf.issuer, serialNumber: leaf.serialNumber }).toSchema(),
      sha.toSchema(),
      signedAttrs,
      sigAlg.toSchema(),
      new asn1js.OctetString({ valueHex: ab(o.signature) }),
      unsigned,
    ],
  });
  const certs = new asn1js.Constructed({
    idBlock: { tagClass: 3, tagNumber: 0 },
    value: o.chainDer.map((d) => asn1js.fromBER(ab(d)).result),
  });
  const signedData = new asn1js.Sequence({
    value: [
      new asn1js.Integer({ value: 1 }),
      new asn1js.Set({ value: [sha.toSchema()] }),
      new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: OID.data })] }),
      certs,
      new asn1js.Set({ value: [signerInfo] }),
    ],
  });
  const contentInfo = new asn1js.Sequence({
    value: [
      new asn1js.ObjectIdentifier({ value: OID.signedData }),
      new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [signedData] }),
    ],
  });
  return new Uint8Array(contentInfo.toBER());
}
