// From a sealed PDF (PAdES B-T) to B-LTA, and renewals of B-LTA: each step an incremental update (ltv.ts), so the
// sealed bytes stay a prefix of the result. Order, as PAdES validators expect: a DSS with the seal's and its
// timestamp's certificates and fresh revocation data, a document timestamp over all of it, then a DSS with that
// timestamp's own validation data. When revocation data for the seal is missing (a foreign issuer that publishes
// none), nothing is appended and the level stays B-T, with the reason. A failing TSA throws: the caller retries.
import { cmsAlgorithms, cmsCertificates, parseCert } from '../../pki/cms.js';
import type { Tsa } from '../../pki/types.js';
import type { ValidationSource } from '../../pki/validation-data.js';
import { appendDss, finishDocTimestamp, prepareDocTimestamp } from './ltv.js';
import { PdfFile } from './pdf-file.js';
import { findSignatures } from './signatures.js';

export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export type LongTermOptions = {
  tsa: Tsa;
  source: ValidationSource;
  /** Issuers of the TSA's certificate known here (tokens usually carry the TSA certificate alone). */
  tsaIssuersDer: Uint8Array[];
};

export type LongTermResult = {
  pdf: Uint8Array;
  level: PadesLevel;
  note: string | null;
  /** The last document timestamp's certificate expiry (epoch ms) and algorithms; null below B-LTA. */
  lastTimestamp: { certNotAfter: number; algorithms: string[] } | null;
};

/** Extends a fresh seal: `sealChainDer` is the seal certificate and its issuers, `sealTokenDer` its timestamp. */
export async function extendSeal(
  sealed: Uint8Array,
  sealChainDer: Uint8Array[],
  sealTokenDer: Uint8Array,
  opts: LongTermOptions,
): Promise<LongTermResult> {
  const tsaChain = cmsCertificates(sealTokenDer, opts.tsaIssuersDer);
  const data = await opts.source.forChains([sealChainDer, tsaChain]);
  if (!data.complete)
    return {
      pdf: sealed,
      level: 'B-T',
      note: `no long-term validation data: ${data.missing.join('; ')}`,
      lastTimestamp: null,
    };
  const withDss = appendDss(sealed, { certsDer: dedupe([...sealChainDer, ...tsaChain]), crlsDer: data.crlsDer });
  return addArchiveTimestamp(withDss, opts);
}

/**
 * A document timestamp over the file as it is, then a DSS with that timestamp's validation data (B-LTA, and the
 * renewal step). The note says when the last DSS lacks revocation data for the new timestamp.
 */
export async function addArchiveTimestamp(pdf: Uint8Array, opts: LongTermOptions): Promise<LongTermResult> {
  const prepared = prepareDocTimestamp(pdf);
  const ts = await opts.tsa.timestamp(prepared.imprint);
  const stamped = finishDocTimestamp(prepared, ts.tokenDer);
  const chain = cmsCertificates(ts.tokenDer, opts.tsaIssuersDer);
  const data = await opts.source.forChains([chain]);
  return {
    pdf: appendDss(stamped, { certsDer: chain, crlsDer: data.crlsDer }),
    level: 'B-LTA',
    note: data.complete ? null : `document timestamp without revocation data: ${data.missing.join('; ')}`,
    lastTimestamp: {
      certNotAfter: parseCert(chain[0]).notAfter.value.getTime(),
      algorithms: cmsAlgorithms(ts.tokenDer),
    },
  };
}

const dedupe = (items: Uint8Array[]) => [...new Map(items.map((d) => [Buffer.from(d).toString('base64'), d])).values()];

/**
 * A renewal: a DSS with fresh validation data for the file's last document timestamp (so its proof holds at the new
 * one's time), then a new document timestamp and its own validation data. `anchorsDer` are the issuers the last
 * timestamp's token may leave out (the local CAs). Throws when the file has no document timestamp to renew.
 */
export async function renewArchive(
  pdf: Uint8Array,
  opts: LongTermOptions & { anchorsDer: Uint8Array[] },
): Promise<LongTermResult> {
  const last = findSignatures(new PdfFile(pdf))
    .filter((s) => s.kind === 'document_timestamp')
    .at(-1);
  if (!last) throw new Error('renewal: the file has no document timestamp');
  const chain = cmsCertificates(last.contents, opts.anchorsDer);
  const data = await opts.source.forChains([chain]);
  return addArchiveTimestamp(appendDss(pdf, { certsDer: chain, crlsDer: data.crlsDer }), opts);
}
