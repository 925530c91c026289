// Signature algorithms as a verifier sees them, and one verify function (node:crypto) for CMS signer infos,
// certificates and CRLs alike. Guarantee: verifySignature never throws; an algorithm we do not know, or a key that
// does not fit the algorithm, comes back as 'unsupported', never as a valid signature.
import { createPublicKey, verify, constants, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { hashNameForOid, OID } from './cms.js';

type Scheme = 'rsa' | 'rsa-pss' | 'ecdsa' | 'ed25519';

// Signature OIDs that name their hash; rsaEncryption and id-ecPublicKey take the CMS digest algorithm's.
const SIG_OIDS: Record<string, { scheme: Scheme; hash: string | null }> = {
  [OID.rsaEncryption]: { scheme: 'rsa', hash: null },
  '1.2.840.113549.1.1.5': { scheme: 'rsa', hash: 'sha1' },
  '1.2.840.113549.1.1.11': { scheme: 'rsa', hash: 'sha256' },
  '1.2.840.113549.1.1.12': { scheme: 'rsa', hash: 'sha384' },
  '1.2.840.113549.1.1.13': { scheme: 'rsa', hash: 'sha512' },
  '1.2.840.113549.1.1.10': { scheme: 'rsa-pss', hash: null }, // hash from the parameters
  [OID.ecPublicKey]: { scheme: 'ecdsa', hash: null },
  '1.2.840.10045.4.1': { scheme: 'ecdsa', hash: 'sha1' },
  '1.2.840.10045.4.3.2': { scheme: 'ecdsa', hash: 'sha256' },
  '1.2.840.10045.4.3.3': { scheme: 'ecdsa', hash: 'sha384' },
  '1.2.840.10045.4.3.4': { scheme: 'ecdsa', hash: 'sha512' },
  '1.3.101.112': { scheme: 'ed25519', hash: null },
};

/** RSA moduli below this many bits count as weak. */
const MIN_RSA_BITS = 2048;

export type SignatureAlgorithm = {
  /** e.g. ecdsa-with-SHA256, rsa-with-SHA256 (PKCS#1 v1.5), rsa-pss-with-SHA256, ed25519. */
  name: string;
  scheme: Scheme;
  hash: string | null;
  saltLength?: number;
};

/** The algorithm an AlgorithmIdentifier names, the hash taken from `digestHash` when the OID leaves it open. */
export function signatureAlgorithm(alg: pkijs.AlgorithmIdentifier, digestHash?: string): SignatureAlgorithm | null {
  const known = SIG_OIDS[alg.algorithmId];
  if (!known) return null;
  if (known.scheme === 'ed25519') return { name: 'ed25519', scheme: 'ed25519', hash: null };
  if (known.scheme === 'rsa-pss') return pssAlgorithm(alg);
  const hash = known.hash ?? digestHash ?? null;
  if (!hash) return null;
  return { name: `${known.scheme}-with-${hashLabel(hash)}`, scheme: known.scheme, hash };
}

function pssAlgorithm(alg: pkijs.AlgorithmIdentifier): SignatureAlgorithm | null {
  // RFC 4055 defaults: SHA-1, MGF1 with SHA-1, salt 20. The MGF1 hash must be the message hash (node:crypto's rule).
  let hash = 'sha1';
  let mgfHash = 'sha1';
  let saltLength = 20;
  if (alg.algorithmParams instanceof asn1js.Sequence) {
    const params = new pkijs.RSASSAPSSParams({ schema: alg.algorithmParams });
    const h = hashNameForOid(params.hashAlgorithm.algorithmId);
    if (!h) return null;
    hash = h;
    if (params.maskGenAlgorithm.algorithmId !== '1.2.840.113549.1.1.8') return null; // id-mgf1
    const mgfParams = params.maskGenAlgorithm.algorithmParams;
    mgfHash =
      mgfParams instanceof asn1js.Sequence
        ? (hashNameForOid(new pkijs.AlgorithmIdentifier({ schema: mgfParams }).algorithmId) ?? '')
        : 'sha1';
    saltLength = params.saltLength;
    if (params.trailerField !== 1) return null;
  }
  if (mgfHash !== hash) return null;
  return { name: `rsa-pss-with-${hashLabel(hash)}`, scheme: 'rsa-pss', hash, saltLength };
}

const hashLabel = (hash: string) => hash.toUpperCase();

/** Why an algorithm or key counts as weak (for the weak_algorithm problem), or null. */
export function weakness(alg: SignatureAlgorithm, key: KeyObject | null): string | null {
  if (alg.hash === 'sha1') return 'SHA1';
  const bits = key?.asymmetricKeyDetails?.modulusLength;
  if ((alg.scheme === 'rsa' || alg.scheme === 'rsa-pss') && bits !== undefined && bits < MIN_RSA_BITS)
    return `RSA-${bits}`;
  return null;
}

/** The public key of a certificate, or null when node:crypto cannot load it. */
export function publicKeyOf(cert: pkijs.Certificate): KeyObject | null {
  try {
    return createPublicKey({
      key: Buffer.from(cert.subjectPublicKeyInfo.toSchema().toBER()),
      format: 'der',
      type: 'spki',
    });
  } catch {
    return null;
  }
}

const KEY_TYPES: Record<Scheme, string[]> = {
  rsa: ['rsa'],
  'rsa-pss': ['rsa', 'rsa-pss'],
  ecdsa: ['ec'],
  ed25519: ['ed25519'],
};

export type VerifyOutcome = 'valid' | 'invalid' | 'unsupported';

/** Verifies `signature` over `data` (ECDSA signatures DER-encoded, as in CMS and X.509). */
export function verifySignature(
  data: Uint8Array,
  signature: Uint8Array,
  alg: SignatureAlgorithm,
  key: KeyObject | null,
): VerifyOutcome {
  if (!key || !KEY_TYPES[alg.scheme].includes(key.asymmetricKeyType ?? '')) return 'unsupported';
  try {
    const ok =
      alg.scheme === 'rsa-pss'
        ? verify(
            alg.hash,
            data,
            { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: alg.saltLength ?? 20 },
            signature,
          )
        : verify(alg.hash, data, key, signature);
    return ok ? 'valid' : 'invalid';
  } catch {
    // A signature that is not even well-formed (e.g. bad DER for ECDSA) is simply wrong.
    return 'invalid';
  }
}

/** Verifies the signature of a certificate or CRL: its to-be-signed bytes, outer algorithm and BIT STRING. */
export function verifySignedObject(
  tbs: Uint8Array,
  algId: pkijs.AlgorithmIdentifier,
  signatureValue: asn1js.BitString,
  key: KeyObject | null,
): { outcome: VerifyOutcome; alg: SignatureAlgorithm | null } {
  const alg = signatureAlgorithm(algId);
  if (!alg) return { outcome: 'unsupported', alg };
  return { outcome: verifySignature(tbs, signatureValue.valueBlock.valueHexView, alg, key), alg };
}
