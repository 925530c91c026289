// RFC 3161 client. A token is returned only after it is checked end to end: status granted(WithMods), our nonce
// and imprint echoed, the CMS signature over TSTInfo valid, ESS signing-certificate(-v2) naming the signer, the
// signer certificate carrying the critical timeStamping EKU, and (when trust anchors are configured) a chain to
// one of them valid at genTime (chain.ts); genTime must fall within the request window widened by maxSkewMs.
// Without trustedCaDer the token is integrity-checked but its TSA is not authenticated beyond the transport.
import { createHash, randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { fetch } from 'undici';
import type { Clock } from '../lib/clock.js';
import { checkChain } from './chain.js';
import { ab, bytesEqual, essCertHashes, findSigner, hashNameForOid, OID, parseCert } from './cms.js';
import type { TimestampResult, Tsa } from './types.js';

export type TsaClientOptions = {
  url: string;
  /** Trust anchors (DER) the TSA certificate must chain to; omit to skip chain building. */
  trustedCaDer?: Uint8Array[];
  clock: Clock;
  timeoutMs?: number;
  /** Allowed distance of genTime outside [request sent, response received]; default 5 minutes. */
  maxSkewMs?: number;
};

export class TsaError extends Error {
  constructor(message: string) {
    super(`TSA: ${message}`);
    this.name = 'TsaError';
  }
}

const MAX_RESPONSE_BYTES = 256 * 1024;

/** `provider` is the URL's host (with a non-default port): known before any call and stable across TSA key rollover. */
export function createTsaClient(opts: TsaClientOptions): Tsa {
  const url = new URL(opts.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`TSA_URL must be http(s): ${opts.url}`);
  const trusted = opts.trustedCaDer ?? [];
  trusted.forEach(parseCert); // an unreadable anchor is a configuration error: fail at start, not per token
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxSkewMs = opts.maxSkewMs ?? 5 * 60_000;

  return {
    provider: url.host,
    async timestamp(imprintSha256: Uint8Array): Promise<TimestampResult> {
      if (imprintSha256.byteLength !== 32) throw new TsaError('imprint must be a 32-byte SHA-256 digest');
      // 63-bit positive nonce: unpredictable enough to bind the reply to this request.
      const nonceBytes = randomBytes(8);
      nonceBytes[0] &= 0x7f;
      nonceBytes[0] |= 0x01;
      const req = new pkijs.TimeStampReq({
        version: 1,
        messageImprint: new pkijs.MessageImprint({
          hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
          hashedMessage: new asn1js.OctetString({ valueHex: ab(imprintSha256) }),
        }),
        nonce: new asn1js.Integer({ valueHex: ab(nonceBytes) }),
        certReq: true,
      });
      const sentAt = opts.clock.now();
      const body = await post(url, new Uint8Array(req.toSchema().toBER()), timeoutMs);
      const receivedAt = opts.clock.now();
      return verifyTimestampResponse(body, {
        imprint: imprintSha256,
        nonce: BigInt('0x' + nonceBytes.toString('hex')),
        trusted,
        notBefore: sentAt - maxSkewMs,
        notAfter: receivedAt + maxSkewMs,
      });
    },
  };
}

async function post(url: URL, der: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
  let res;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
      body: der,
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const cause =
      (err as Error).name === 'TimeoutError' ? `no response within ${timeoutMs} ms` : (err as Error).message;
    throw new TsaError(`request to ${url.host} failed: ${cause}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new TsaError(`${url.host} answered HTTP ${res.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body!) {
      size += chunk.byteLength;
      if (size > MAX_RESPONSE_BYTES) {
        await res.body!.cancel();
        throw new TsaError(`response from ${url.host} exceeds ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof TsaError) throw err;
    throw new TsaError(`reading the response from ${url.host} failed: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks);
}

export type VerifyExpectations = {
  imprint: Uint8Array;
  /** Expected nonce, or undefined when the request carried none. */
  nonce?: bigint;
  /** Trust anchors (DER); empty skips chain validation. */
  trusted: Uint8Array[];
  /** Bounds for genTime, ms since the epoch. */
  notBefore: number;
  notAfter: number;
};

/** Verifies a DER TimeStampResp against what was asked; returns the token bytes exactly as received. */
export async function verifyTimestampResponse(der: Uint8Array, want: VerifyExpectations): Promise<TimestampResult> {
  try {
    return await verify(der, want);
  } catch (err) {
    if (err instanceof TsaError) throw err;
    // Structurally odd input makes the ASN.1 libraries throw TypeErrors and the like.
    throw new TsaError(`malformed response: ${(err as Error).message}`);
  }
}

async function verify(der: Uint8Array, want: VerifyExpectations): Promise<TimestampResult> {
  const asn = asn1js.fromBER(ab(der));
  if (asn.offset === -1 || !(asn.result instanceof asn1js.Sequence))
    throw new TsaError('response is not a DER TimeStampResp');
  let resp: pkijs.TimeStampResp;
  try {
    resp = new pkijs.TimeStampResp({ schema: asn.result });
  } catch {
    throw new TsaError('response is not a TimeStampResp');
  }
  const status = resp.status.status;
  if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) {
    const text = (resp.status.statusStrings ?? []).map((s) => s.valueBlock.value).join('; ');
    throw new TsaError(`request rejected (status ${status}${text ? `: ${text}` : ''})`);
  }
  if (!resp.timeStampToken) throw new TsaError('granted response carries no token');
  const tokenDer = new Uint8Array((asn.result.valueBlock.value[1] as asn1js.Sequence).valueBeforeDecodeView);

  if (resp.timeStampToken.contentType !== OID.signedData) throw new TsaError('token is not SignedData');
  const sd = new pkijs.SignedData({ schema: resp.timeStampToken.content });
  if (sd.encapContentInfo.eContentType !== OID.tstInfo || !sd.encapContentInfo.eContent)
    throw new TsaError('token does not hold a TSTInfo');
  const tstDer = new Uint8Array(sd.encapContentInfo.eContent.getValue());
  const tst = pkijs.TSTInfo.fromBER(ab(tstDer));

  if (tst.messageImprint.hashAlgorithm.algorithmId !== OID.sha256) throw new TsaError('token imprint is not SHA-256');
  if (!bytesEqual(new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView), want.imprint)) {
    throw new TsaError('token imprint does not match the request');
  }
  if (want.nonce !== undefined && (!tst.nonce || tst.nonce.toBigInt() !== want.nonce))
    throw new TsaError('nonce mismatch');

  const genTime = tst.genTime.getTime();
  if (!Number.isFinite(genTime) || genTime < want.notBefore || genTime > want.notAfter) {
    throw new TsaError(`genTime ${tst.genTime.toISOString()} is outside the request window`);
  }

  if (sd.signerInfos.length !== 1) throw new TsaError(`token has ${sd.signerInfos.length} signers, expected 1`);
  const si = sd.signerInfos[0];
  const certs = (sd.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
  const signer = findSigner(si, certs);
  if (!signer) throw new TsaError('signer certificate missing from the token');

  // Signed attributes: content type, digest of the TSTInfo, ESS signing-certificate naming the signer.
  const attrs = si.signedAttrs?.attributes ?? [];
  const find = (type: string) => attrs.find((a) => a.type === type);
  const ct = find(OID.contentType);
  if (!ct || (ct.values[0] as asn1js.ObjectIdentifier).valueBlock.toString() !== OID.tstInfo)
    throw new TsaError('content-type attribute is not TSTInfo');
  const hashName = hashNameForOid(si.digestAlgorithm.algorithmId);
  if (!hashName || hashName === 'sha1')
    throw new TsaError(`unsupported token digest ${si.digestAlgorithm.algorithmId}`);
  const md = find(OID.messageDigest);
  const tstDigest = new Uint8Array(createHash(hashName).update(tstDer).digest());
  if (!md || !bytesEqual(new Uint8Array((md.values[0] as asn1js.OctetString).valueBlock.valueHexView), tstDigest)) {
    throw new TsaError('message-digest attribute does not match the TSTInfo');
  }
  const ess = find(OID.signingCertificateV2) ?? find(OID.signingCertificate);
  if (!ess) throw new TsaError('no ESS signing-certificate attribute');
  const signerDer = new Uint8Array(signer.toSchema().toBER());
  const hashes = essCertHashes(ess);
  if (
    hashes.length === 0 ||
    !bytesEqual(new Uint8Array(createHash(hashes[0].hash).update(signerDer).digest()), hashes[0].value)
  ) {
    throw new TsaError('ESS signing-certificate does not name the signer certificate');
  }

  const engine = pkijs.getCrypto(true);
  const ok = await engine
    .verifyWithPublicKey(
      si.signedAttrs!.encodedValue,
      si.signature,
      signer.subjectPublicKeyInfo,
      si.signatureAlgorithm,
      hashName.toUpperCase().replace('SHA', 'SHA-'),
    )
    .catch(() => false);
  if (!ok) throw new TsaError('token signature does not verify');

  const eku = signer.extensions?.find((e) => e.extnID === OID.extKeyUsage);
  if (!eku || !eku.critical || !(eku.parsedValue as pkijs.ExtKeyUsage).keyPurposes.includes(OID.timeStamping)) {
    throw new TsaError('signer certificate lacks the critical timeStamping extended key usage');
  }

  if (want.trusted.length > 0) {
    // No CRLs here: the token is fresh, so revocation is left to whoever later validates the signature.
    const chain = await checkChain(signerDer, {
      at: tst.genTime,
      candidatesDer: certs.map((c) => new Uint8Array(c.toSchema().toBER())),
      crlsDer: [],
      anchorsDer: want.trusted,
      purpose: 'timestamp',
    });
    if (!chain.trusted) {
      const why = chain.problems.filter((p) => p.code !== 'revocation_unknown').map((p) => p.code);
      throw new TsaError(`signer certificate is not trusted: ${why.join(', ')}`);
    }
  }
  return { tokenDer, signedAt: tst.genTime.toISOString() };
}
