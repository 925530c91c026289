// Checks a CMS signature over given signed bytes: a PDF signature (ETSI.CAdES.detached, adbe.pkcs7.detached) with
// its signature timestamp, or an RFC 3161 token used as a document timestamp. Guarantees: never throws (malformed
// input is intact: false with cms_malformed); `intact` is true only when the digest over the signed bytes matches
// AND the CMS signature verifies with the signer certificate the CMS carries. Whether that certificate is
// trusted is chain.ts's question, asked by the caller with the certificates returned here.
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { publicKeyOf, signatureAlgorithm, verifySignature, weakness } from './algorithms.js';
import { certSummary, type CertSummary } from './cert-info.js';
import { ab, bytesEqual, essCertHashes, findSigner, hashNameForOid, OID, parseCert } from './cms.js';
import { addProblem, problem, type Problem } from './problems.js';

export type { CertSummary } from './cert-info.js';

export type TimestampCheck = {
  /** TSTInfo genTime, ISO 8601 UTC; null when the token cannot be read. */
  genTime: string | null;
  /** The imprint matches the stamped bytes and the token's CMS signature verifies. */
  intact: boolean;
  signer: CertSummary | null;
  signerCertDer: Uint8Array | null;
  certsDer: Uint8Array[];
  problems: Problem[];
};

export type CmsCheck = {
  /** The digest over the signed bytes matches and the CMS signature verifies. */
  intact: boolean;
  signer: CertSummary | null;
  signerCertDer: Uint8Array | null;
  /** Every certificate in the CMS and in its signature timestamp token, as carried (DER), without repeats. */
  certsDer: Uint8Array[];
  /** The signing-time signed attribute (a claim, not proof), ISO 8601 UTC. */
  signingTime: string | null;
  /** 'signature': its signatureTimeStampToken, checked over the signature value; 'document_timestamp': itself. */
  timestamp: TimestampCheck | null;
  /** Digest as a node hash name (sha256); signature as e.g. ecdsa-with-SHA256 (see algorithms.ts). */
  algorithms: { digest: string; signature: string };
  problems: Problem[];
};

export type CmsKind = 'signature' | 'document_timestamp';

export async function checkCms(cmsDer: Uint8Array, signedParts: Uint8Array[], kind: CmsKind): Promise<CmsCheck> {
  try {
    return kind === 'document_timestamp' ? documentTimestamp(cmsDer, signedParts) : signature(cmsDer, signedParts);
  } catch {
    // The parsers are guarded; this is the net for ASN.1 shapes that still make a library throw.
    return malformed();
  }
}

/** Checks an RFC 3161 TimeStampToken stamping `stampedParts` (concatenated). */
export async function checkTimestampToken(tokenDer: Uint8Array, stampedParts: Uint8Array[]): Promise<TimestampCheck> {
  try {
    return token(tokenDer, stampedParts, 'timestamp_imprint_mismatch').check;
  } catch {
    return { ...noSigner(), genTime: null, intact: false, problems: [problem('cms_malformed')] };
  }
}

const noSigner = () => ({ signer: null, signerCertDer: null, certsDer: [] as Uint8Array[] });

const malformed = (): CmsCheck => ({
  ...noSigner(),
  intact: false,
  signingTime: null,
  timestamp: null,
  algorithms: { digest: '', signature: '' },
  problems: [problem('cms_malformed')],
});

function signature(cmsDer: Uint8Array, parts: Uint8Array[]): CmsCheck {
  const p = parseSignedData(cmsDer);
  if (!p) return malformed();
  const problems: Problem[] = [];
  let contentOk = true;
  let content: Content = { digest: (hash) => digest(hash, parts), bytes: () => Buffer.concat(parts) };
  const eContent = p.sd.encapContentInfo.eContent;
  if (eContent) {
    // adbe.pkcs7.sha1: the CMS encapsulates the SHA-1 digest of the signed bytes and signs that.
    const inner = new Uint8Array(eContent.getValue());
    contentOk = bytesEqual(inner, digest('sha1', parts));
    if (!contentOk) addProblem(problems, problem('digest_mismatch'));
    addProblem(problems, problem('weak_algorithm', { algorithm: 'SHA1' }));
    content = { digest: (hash) => digest(hash, [inner]), bytes: () => inner };
  }
  const s = verifySigner(p, content, false, problems);

  let timestamp: TimestampCheck | null = null;
  const certsDer = [...p.certsDer];
  const tstAttr = p.si.unsignedAttrs?.attributes.find((a) => a.type === OID.signatureTimeStampToken);
  if (!tstAttr) addProblem(problems, problem('timestamp_missing'));
  else {
    const raw = (tstAttr.values[0] as asn1js.BaseBlock | undefined)?.valueBeforeDecodeView;
    const sigValue = new Uint8Array(p.si.signature.valueBlock.valueHexView);
    timestamp = raw
      ? token(new Uint8Array(raw), [sigValue], 'timestamp_imprint_mismatch').check
      : { ...noSigner(), genTime: null, intact: false, problems: [problem('cms_malformed')] };
    if (!timestamp.intact) addProblem(problems, problem('timestamp_invalid'));
    for (const d of timestamp.certsDer) if (!certsDer.some((c) => bytesEqual(c, d))) certsDer.push(d);
  }
  return {
    intact: contentOk && s.intact,
    signer: s.signer ? certSummary(s.signer) : null,
    signerCertDer: s.signerDer,
    certsDer,
    signingTime: signingTimeOf(p.si),
    timestamp,
    algorithms: s.algorithms,
    problems,
  };
}

function documentTimestamp(tokenDer: Uint8Array, parts: Uint8Array[]): CmsCheck {
  const { check, signingTime, algorithms } = token(tokenDer, parts, 'digest_mismatch');
  if (check.problems.some((q) => q.code === 'cms_malformed')) return malformed();
  const { genTime: _g, ...rest } = check;
  return { ...rest, signingTime, timestamp: check, algorithms };
}

/** A token's check, plus what the document-timestamp view of it needs. `mismatch` names a wrong imprint. */
function token(
  tokenDer: Uint8Array,
  stamped: Uint8Array[],
  mismatch: 'timestamp_imprint_mismatch' | 'digest_mismatch',
): { check: TimestampCheck; signingTime: string | null; algorithms: CmsCheck['algorithms'] } {
  const bad = {
    check: { ...noSigner(), genTime: null, intact: false, problems: [problem('cms_malformed')] },
    signingTime: null,
    algorithms: { digest: '', signature: '' },
  };
  const p = parseSignedData(tokenDer);
  const eContent = p?.sd.encapContentInfo.eContent;
  if (!p || p.sd.encapContentInfo.eContentType !== OID.tstInfo || !eContent) return bad;
  const tstDer = new Uint8Array(eContent.getValue());
  let tst: pkijs.TSTInfo;
  try {
    tst = pkijs.TSTInfo.fromBER(ab(tstDer));
  } catch {
    return bad;
  }
  const genMs = tst.genTime.getTime();
  if (!Number.isFinite(genMs)) return bad;

  const problems: Problem[] = [];
  const imprintAlg = tst.messageImprint.hashAlgorithm.algorithmId;
  const imprintHash = hashNameForOid(imprintAlg);
  let imprintOk = false;
  if (!imprintHash) addProblem(problems, problem('unsupported_algorithm', { algorithm: imprintAlg }));
  else {
    if (imprintHash === 'sha1') addProblem(problems, problem('weak_algorithm', { algorithm: 'SHA1' }));
    const want = new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView);
    imprintOk = bytesEqual(want, digest(imprintHash, stamped));
    if (!imprintOk) addProblem(problems, problem(mismatch));
  }
  const s = verifySigner(p, { digest: (hash) => digest(hash, [tstDer]), bytes: () => tstDer }, true, problems);
  return {
    check: {
      genTime: new Date(genMs).toISOString(),
      intact: imprintOk && s.intact,
      signer: s.signer ? certSummary(s.signer) : null,
      signerCertDer: s.signerDer,
      certsDer: p.certsDer,
      problems,
    },
    signingTime: signingTimeOf(p.si),
    algorithms: s.algorithms,
  };
}

type Parsed = { sd: pkijs.SignedData; si: pkijs.SignerInfo; certs: pkijs.Certificate[]; certsDer: Uint8Array[] };

/** ContentInfo with SignedData and exactly one SignerInfo, or null. Zero padding after the DER is allowed. */
function parseSignedData(der: Uint8Array): Parsed | null {
  try {
    const asn = asn1js.fromBER(ab(der));
    if (asn.offset === -1 || !(asn.result instanceof asn1js.Sequence)) return null;
    for (let i = asn.offset; i < der.byteLength; i++) if (der[i] !== 0) return null;
    const ci = new pkijs.ContentInfo({ schema: asn.result });
    if (ci.contentType !== OID.signedData) return null;
    const sd = new pkijs.SignedData({ schema: ci.content });
    if (sd.signerInfos.length !== 1) return null;
    const certs: pkijs.Certificate[] = [];
    const certsDer: Uint8Array[] = [];
    for (const d of rawCertificates(ci.content as asn1js.Sequence)) {
      try {
        certs.push(parseCert(d));
        certsDer.push(d);
      } catch {
        // An unreadable certificate is as good as absent: the signer lookup reports what is missing.
      }
    }
    return { sd, si: sd.signerInfos[0], certs, certsDer };
  } catch {
    return null;
  }
}

/** The certificates field's X.509 certificates exactly as encoded (re-encoding could change bytes). */
function rawCertificates(signedData: asn1js.Sequence): Uint8Array[] {
  const field = signedData.valueBlock.value.find((b) => b.idBlock.tagClass === 3 && b.idBlock.tagNumber === 0);
  if (!(field instanceof asn1js.Constructed)) return [];
  return field.valueBlock.value
    .filter((b) => b.idBlock.tagClass === 1 && b.idBlock.tagNumber === 16)
    .map((b) => new Uint8Array(b.valueBeforeDecodeView));
}

/** What a SignerInfo signs: its digest under a hash, or the bytes themselves (when there are no signed attributes). */
type Content = { digest(hash: string): Uint8Array; bytes(): Uint8Array };

type SignerResult = {
  intact: boolean;
  signer: pkijs.Certificate | null;
  signerDer: Uint8Array | null;
  algorithms: CmsCheck['algorithms'];
};

/**
 * The SignerInfo against the content: messageDigest (when there are signed attributes), ESS signing-certificate,
 * the signature with the signer's key.
 */
function verifySigner(p: Parsed, content: Content, requireEss: boolean, problems: Problem[]): SignerResult {
  const { si } = p;
  const digestOid = si.digestAlgorithm.algorithmId;
  const hash = hashNameForOid(digestOid);
  const signer = findSigner(si, p.certs) ?? null;
  const signerDer = signer ? p.certsDer[p.certs.indexOf(signer)] : null;
  const alg = signatureAlgorithm(si.signatureAlgorithm, hash ?? undefined);
  const algorithms = { digest: hash ?? digestOid, signature: alg?.name ?? si.signatureAlgorithm.algorithmId };
  const fail = { intact: false, signer, signerDer, algorithms };
  if (!signer) addProblem(problems, problem('signer_cert_missing'));
  if (!hash) {
    addProblem(problems, problem('unsupported_algorithm', { algorithm: digestOid }));
    return fail;
  }
  if (hash === 'sha1') addProblem(problems, problem('weak_algorithm', { algorithm: 'SHA1' }));

  let signedBytes: Uint8Array;
  let digestOk = true;
  const attrs = si.signedAttrs?.attributes;
  if (attrs) {
    const md = attrs.find((a) => a.type === OID.messageDigest)?.values[0];
    digestOk =
      md instanceof asn1js.OctetString && bytesEqual(new Uint8Array(md.valueBlock.valueHexView), content.digest(hash));
    if (!digestOk) addProblem(problems, problem('digest_mismatch'));
    // The signature covers the attributes' DER with the SET OF tag, which pkijs keeps as encodedValue.
    signedBytes = new Uint8Array(si.signedAttrs!.encodedValue);
    const ess = attrs.find((a) => a.type === OID.signingCertificateV2 || a.type === OID.signingCertificate);
    if (signer && signerDer && (ess ? !essNames(ess, signerDer) : requireEss))
      addProblem(problems, problem('ess_cert_mismatch'));
  } else {
    // No signed attributes (plain PKCS#7): the signature is over the content itself.
    signedBytes = content.bytes();
  }
  if (!signer) return fail;
  if (!alg) {
    addProblem(problems, problem('unsupported_algorithm', { algorithm: si.signatureAlgorithm.algorithmId }));
    return fail;
  }
  const key = publicKeyOf(signer);
  const outcome = verifySignature(signedBytes, si.signature.valueBlock.valueHexView, alg, key);
  if (outcome === 'unsupported') {
    addProblem(problems, problem('unsupported_algorithm', { algorithm: `${alg.name} (${key?.asymmetricKeyType})` }));
    return fail;
  }
  if (outcome === 'invalid') addProblem(problems, problem('signature_invalid'));
  const weak = weakness(alg, key);
  if (weak) addProblem(problems, problem('weak_algorithm', { algorithm: weak }));
  return { ...fail, intact: digestOk && outcome === 'valid' };
}

/** True when the ESS signing-certificate(-v2) attribute's first entry is the hash of `certDer`. */
function essNames(ess: pkijs.Attribute, certDer: Uint8Array): boolean {
  try {
    const first = essCertHashes(ess)[0];
    return !!first && bytesEqual(digest(first.hash, [certDer]), first.value);
  } catch {
    return false;
  }
}

function signingTimeOf(si: pkijs.SignerInfo): string | null {
  const v = si.signedAttrs?.attributes.find((a) => a.type === OID.signingTime)?.values[0];
  if (!(v instanceof asn1js.UTCTime || v instanceof asn1js.GeneralizedTime)) return null;
  const ms = v.toDate().getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

function digest(hash: string, parts: Uint8Array[]): Uint8Array {
  const h = createHash(hash);
  for (const part of parts) h.update(part);
  return new Uint8Array(h.digest());
}
