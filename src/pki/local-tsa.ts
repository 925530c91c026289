// The embedded RFC 3161 time-stamping authority. genTime comes from the injected clock, truncated to the second,
// serial numbers are random 128-bit values (unique across processes without coordination), and every token's
// signed attributes carry ESS signing-certificate-v2 (RFC 5816) naming the TSA certificate.
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { Clock } from '../lib/clock.js';
import { ab, attr, OID, parseCert, randomSerial, sha256, signingCertificateV2 } from './cms.js';
import type { TimestampResult, Tsa } from './types.js';

/** TSA policy: UUID 53d7cc8b-1546-4c2a-b187-059c2abe3f07 under the X.667 arc 2.25, unique without registration. */
export const LOCAL_TSA_POLICY = '2.25.111446416105590909515688872565068939015';

export const LOCAL_TSA_PROVIDER = 'local';

export type LocalTsa = Tsa & {
  certDer: Uint8Array;
  /** Answers a DER TimeStampReq with a DER TimeStampResp (granted, or rejection with a failInfo). */
  handleTimestampQuery(derRequest: Uint8Array): Promise<Uint8Array>;
};

export type LocalTsaOptions = {
  /** Put in tokens on request; its issuers are not (verifiers hold the CA). */
  certDer: Uint8Array;
  privateKey: CryptoKey;
  clock: Clock;
};

// PKIFailureInfo bit numbers (RFC 3161 §2.4.2).
const FAIL = {
  badAlg: 0,
  badRequest: 2,
  badDataFormat: 5,
  unacceptedPolicy: 15,
  unacceptedExtension: 16,
  systemFailure: 25,
} as const;

export function createLocalTsa(opts: LocalTsaOptions): LocalTsa {
  const cert = parseCert(opts.certDer);
  const certAttr = signingCertificateV2(cert, opts.certDer);

  const issue = async (
    imprint: Uint8Array,
    nonce: asn1js.Integer | undefined,
    includeCert: boolean,
  ): Promise<{ token: pkijs.ContentInfo; genTime: Date }> => {
    // Whole seconds, like the CRLs (UTCTime): a CRL issued after a token is never dated before it.
    const genTime = new Date(Math.floor(opts.clock.now() / 1000) * 1000);
    const tst = new pkijs.TSTInfo({
      version: 1,
      policy: LOCAL_TSA_POLICY,
      messageImprint: new pkijs.MessageImprint({
        hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
        hashedMessage: new asn1js.OctetString({ valueHex: ab(imprint) }),
      }),
      serialNumber: new asn1js.Integer({ valueHex: ab(randomSerial()) }),
      genTime,
      accuracy: new pkijs.Accuracy({ seconds: 1 }),
      ...(nonce ? { nonce } : {}),
    });
    const tstDer = new Uint8Array(tst.toSchema().toBER());
    const sd = new pkijs.SignedData({
      version: 3,
      encapContentInfo: new pkijs.EncapsulatedContentInfo({
        eContentType: OID.tstInfo,
        eContent: new asn1js.OctetString({ valueHex: ab(tstDer) }),
      }),
      signerInfos: [
        new pkijs.SignerInfo({
          version: 1,
          sid: new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber }),
          signedAttrs: new pkijs.SignedAndUnsignedAttributes({
            type: 0,
            attributes: [
              attr(OID.contentType, new asn1js.ObjectIdentifier({ value: OID.tstInfo })),
              attr(OID.messageDigest, new asn1js.OctetString({ valueHex: ab(sha256(tstDer)) })),
              certAttr,
            ],
          }),
        }),
      ],
      ...(includeCert ? { certificates: [cert] } : {}),
    });
    await sd.sign(opts.privateKey, 0, 'SHA-256');
    return { token: new pkijs.ContentInfo({ contentType: OID.signedData, content: sd.toSchema(true) }), genTime };
  };

  return {
    provider: LOCAL_TSA_PROVIDER,
    certDer: opts.certDer,

    async timestamp(imprintSha256: Uint8Array): Promise<TimestampResult> {
      if (imprintSha256.byteLength !== 32) throw new Error('timestamp imprint must be a 32-byte SHA-256 digest');
      const { token, genTime } = await issue(imprintSha256, undefined, true);
      return { tokenDer: new Uint8Array(token.toSchema().toBER()), signedAt: genTime.toISOString() };
    },

    async handleTimestampQuery(derRequest: Uint8Array): Promise<Uint8Array> {
      let req: pkijs.TimeStampReq;
      try {
        req = pkijs.TimeStampReq.fromBER(ab(derRequest));
      } catch {
        return reject(FAIL.badDataFormat, 'malformed TimeStampReq');
      }
      const imprint = new Uint8Array(req.messageImprint.hashedMessage.valueBlock.valueHexView);
      if (req.messageImprint.hashAlgorithm.algorithmId !== OID.sha256 || imprint.byteLength !== 32) {
        return reject(FAIL.badAlg, 'only SHA-256 imprints are accepted');
      }
      if (req.reqPolicy !== undefined && req.reqPolicy !== LOCAL_TSA_POLICY)
        return reject(FAIL.unacceptedPolicy, 'unknown policy');
      if (req.extensions && req.extensions.length > 0)
        return reject(FAIL.unacceptedExtension, 'extensions are not supported');
      try {
        const { token } = await issue(imprint, req.nonce, req.certReq === true);
        const resp = new pkijs.TimeStampResp({
          status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }),
          timeStampToken: token,
        });
        return new Uint8Array(resp.toSchema().toBER());
      } catch {
        return reject(FAIL.systemFailure, 'internal error');
      }
    },
  };
}

function reject(bit: number, text: string): Uint8Array {
  // DER named BIT STRING: minimal length, trailing unused bits counted.
  const bytes = new Uint8Array((bit >> 3) + 1);
  bytes[bit >> 3] = 0x80 >> (bit & 7);
  const status = new pkijs.PKIStatusInfo({
    status: pkijs.PKIStatus.rejection,
    statusStrings: [new asn1js.Utf8String({ value: text })],
    failInfo: new asn1js.BitString({ valueHex: ab(bytes), unusedBits: 7 - (bit & 7) }),
  });
  return new Uint8Array(new pkijs.TimeStampResp({ status }).toSchema().toBER());
}
