// PAdES sealing: ETSI.CAdES.detached CMS over the whole file (ByteRange covers everything but /Contents),
// signed attributes contentType, messageDigest and signing-certificate-v2 (no signing-time: the claimed time
// is /M, the trusted one the timestamp), then an RFC 3161 token over the signature value as the unsigned
// attribute signatureTimeStampToken.
// Sealing runs in two steps so the heavy part can live in a worker: prepareSeal (parse, placeholder, save,
// hash, sign; CPU, O(file)) and finishSeal (add the token, write /Contents; O(signature)). The TSA call sits
// between them on the caller's thread, so the token's genTime is taken after the signature exists.
// By default the PDF is rewritten by pdf-lib, not incrementally updated: any signature already in it stops verifying.
// With `incremental: true` (for files that already hold signatures, e.g. a qualified signer's: see hasSignatures) the
// seal's field is appended as one incremental update (signature-field.ts), so the input stays a byte prefix and
// earlier signatures keep verifying. Either way that gives B-T; long-term.ts then appends the DSS and a document
// timestamp incrementally (B-LTA) on this thread.
// This module is the caller's side and loads no PDF library (pdf-lib, @signpdf): prepareSeal is in seal.work.ts,
// which only the seal worker (seal.worker.ts) and tests import.
import os from 'node:os';
import * as asn1js from 'asn1js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { createWorkerPool, siblingModule } from '../../lib/worker-pool.js';
import { PDF_WORKER_IDLE_MS } from '../../limits.js';
import { OID, sha256, toHex } from '../../pki/cms.js';
import type { SealIdentity, Tsa } from '../../pki/types.js';
import { extendSeal, type LongTermOptions, type LongTermResult, type PadesLevel } from './long-term.js';
import { PdfFile } from './pdf-file.js';
import { PdfSyntaxError } from './pdf-syntax.js';
import { findSignatures } from './signatures.js';
import type { SealJob } from './seal.worker.js';

/** Room for the CMS in /Contents, in bytes (hex doubles it): seal chain + TSA token with its certificates. */
export const SEAL_PLACEHOLDER_BYTES = 16384;

export type SealMeta = {
  name?: string;
  reason?: string;
  location?: string;
  contactInfo?: string;
  /** Append the seal as an incremental update instead of rewriting the file (keeps earlier signatures valid). */
  incremental?: boolean;
};

/**
 * Whether `pdf` already holds a signature or document timestamp (a signature field with a value), read byte-level
 * (pdf-file.ts, no PDF library). Such a file must be sealed with `incremental: true`. False for a file the byte-level
 * reader cannot parse (it could not be updated incrementally either).
 */
export function hasSignatures(pdf: Uint8Array): boolean {
  try {
    return findSignatures(new PdfFile(pdf)).length > 0;
  } catch (err) {
    if (err instanceof PdfSyntaxError) return false;
    throw err;
  }
}

export type SealOptions = SealMeta & {
  seal: SealIdentity;
  tsa: Tsa;
  /** Source of the /M claimed signing time; defaults to the system clock. */
  clock?: Clock;
  /** Where B-LTA's validation data comes from; without it the seal stays B-T. */
  longTerm?: LongTermData;
};

/** What long-term.ts needs beyond the TSA. */
export type LongTermData = Omit<LongTermOptions, 'tsa'>;

export type SealResult = {
  pdf: Uint8Array;
  certSerial: string;
  tsaProvider: string;
  tsaSignedAt: string;
  padesLevel: PadesLevel;
  /** Why the level is below B-LTA, or what its last revision lacks; null when nothing is missing. */
  padesNote: string | null;
  /** SHA-256 of the seal's own revision, the prefix of every later copy of this file (renewals included). */
  sealRevisionSha256: string;
  /** The last document timestamp's certificate expiry and algorithms, for renewal; null below B-LTA. */
  lastTimestamp: LongTermResult['lastTimestamp'];
};

/** What prepareSeal hands to finishSeal; structured-cloneable so it can come back from a worker. */
export type PreparedSeal = {
  /** The final file except /Contents, which is still zero-filled. */
  pdf: Uint8Array;
  /** Offset of the first hex digit inside /Contents <...>, and how many hex digits fit. */
  contentsOffset: number;
  contentsHexLength: number;
  /** Encoded SignedData fields before signerInfos (version, digestAlgorithms, encapContentInfo, certificates). */
  signedDataHead: Uint8Array;
  /** Encoded SignerInfo fields (version through signature); the unsigned attributes follow them. */
  signerInfoBody: Uint8Array;
  signatureValue: Uint8Array;
};

/** The seal key material a worker needs (the serial and anything else stay on the caller's side). */
export type SealKey = Pick<SealIdentity, 'certDer' | 'chainDer' | 'privateKey'>;

export type Sealer = {
  seal(pdf: Uint8Array, meta?: SealMeta): Promise<SealResult>;
  close(): Promise<void>;
};

export type SealerOptions = (
  | { pki: { seal: SealIdentity; localTsa: Tsa }; /** Overrides the PKI's local TSA (TSA_URL). */ tsa?: Tsa }
  | { seal: SealIdentity; tsa: Tsa }
) & { clock?: Clock; poolSize?: number; longTerm?: LongTermData };

/**
 * Seals in worker threads: prepareSeal runs in the pool (the CryptoKey is structured-cloned into it), the TSA
 * call and finishSeal, about 2 ms of CPU with the local TSA, run here. The first seal also pays the worker's
 * start-up (loading pdf-lib and pkijs), as does the first after its worker stopped for being idle.
 */
export function createSealer(opts: SealerOptions): Sealer {
  const seal = 'pki' in opts ? opts.pki.seal : opts.seal;
  const tsa = 'pki' in opts ? (opts.tsa ?? opts.pki.localTsa) : opts.tsa;
  const clock = opts.clock ?? systemClock;
  const size = opts.poolSize ?? Math.min(2, Math.max(1, os.availableParallelism() - 1));
  const pool = createWorkerPool<SealJob, PreparedSeal>(siblingModule(import.meta.url, './seal.worker'), {
    size,
    idleTimeoutMs: PDF_WORKER_IDLE_MS,
  });
  const key: SealKey = { certDer: seal.certDer, chainDer: seal.chainDer, privateKey: seal.privateKey };
  return {
    async seal(pdf, meta = {}) {
      // An exact copy we can transfer: cloning a view would copy its whole backing buffer (e.g. a pooled Buffer).
      const bytes = new Uint8Array(pdf);
      const prepared = await pool.run(
        { pdf: bytes, seal: key, meta, signingTimeMs: clock.now() },
        { transfer: [bytes.buffer as ArrayBuffer] },
      );
      return timestampAndFinish(prepared, seal, tsa, opts.longTerm);
    },
    close: () => pool.close(),
  };
}

/** The TSA call, finishSeal and the long-term steps: the part of sealing that stays on the caller's thread. */
export async function timestampAndFinish(
  prepared: PreparedSeal,
  seal: SealIdentity,
  tsa: Tsa,
  longTerm?: LongTermData,
): Promise<SealResult> {
  const ts = await tsa.timestamp(sha256(prepared.signatureValue));
  const sealed = finishSeal(prepared, ts.tokenDer);
  const sealRevisionSha256 = toHex(sha256(sealed));
  const extended = longTerm
    ? await extendSeal(sealed, [seal.certDer, ...seal.chainDer], ts.tokenDer, { ...longTerm, tsa })
    : { pdf: sealed, level: 'B-T' as const, note: 'no long-term validation data configured', lastTimestamp: null };
  return {
    pdf: extended.pdf,
    certSerial: seal.serialHex,
    tsaProvider: tsa.provider,
    tsaSignedAt: ts.signedAt,
    padesLevel: extended.level,
    padesNote: extended.note,
    sealRevisionSha256,
    lastTimestamp: extended.lastTimestamp,
  };
}

/**
 * Adds the timestamp token as an unsigned attribute and writes the CMS into /Contents, in place. Assembles DER
 * from the prepared fields by concatenation rather than re-parsing with pkijs: this runs on the caller's
 * (event-loop) thread, where a pkijs round trip costs several milliseconds.
 */
export function finishSeal(prepared: PreparedSeal, tokenDer: Uint8Array): Uint8Array {
  if (!isSingleDerSequence(tokenDer)) throw new Error('seal: timestamp token is not a DER SEQUENCE');
  const unsignedAttrs = tlv(0xa1, tlv(0x30, TST_ATTR_OID, tlv(0x31, tokenDer)));
  const signerInfo = tlv(0x30, prepared.signerInfoBody, unsignedAttrs);
  const signedData = tlv(0x30, prepared.signedDataHead, tlv(0x31, signerInfo));
  const contentInfo = tlv(0x30, SIGNED_DATA_OID, tlv(0xa0, signedData));
  if (contentInfo.length * 2 > prepared.contentsHexLength) {
    throw new Error(
      `seal: signature (${contentInfo.length} bytes) exceeds the ${prepared.contentsHexLength / 2}-byte placeholder`,
    );
  }
  const out = Buffer.from(prepared.pdf.buffer, prepared.pdf.byteOffset, prepared.pdf.byteLength);
  out.write(contentInfo.toString('hex'), prepared.contentsOffset, 'latin1');
  return prepared.pdf;
}

const oidDer = (oid: string) => new Uint8Array(new asn1js.ObjectIdentifier({ value: oid }).toBER());
const TST_ATTR_OID = oidDer(OID.signatureTimeStampToken);
const SIGNED_DATA_OID = oidDer(OID.signedData);

/** One DER TLV with definite length around the concatenated parts. */
function tlv(tag: number, ...parts: Uint8Array[]): Buffer {
  const len = parts.reduce((n, p) => n + p.byteLength, 0);
  let head: number[];
  if (len < 0x80) head = [tag, len];
  else {
    const lenBytes: number[] = [];
    for (let n = len; n > 0; n = Math.floor(n / 256)) lenBytes.unshift(n & 0xff);
    head = [tag, 0x80 | lenBytes.length, ...lenBytes];
  }
  return Buffer.concat([Uint8Array.from(head), ...parts]);
}

/** True when `der` is exactly one SEQUENCE with a definite length spanning the whole buffer. */
function isSingleDerSequence(der: Uint8Array): boolean {
  if (der.byteLength < 2 || der[0] !== 0x30) return false;
  let len = der[1];
  let off = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || der.byteLength < 2 + n) return false;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[2 + i];
    off += n;
  }
  return off + len === der.byteLength;
}
