// Worker side of verification (see verify.ts for the report's meaning): reads the revisions, checks every signature's
// CMS over its byte range, validates each certificate path at the time that proves it, decides the PAdES level and
// whether anything beyond DSS and document timestamps changed after the last signature. Never rewrites the file.
import { checkChain, type ChainCheck } from '../../pki/chain.js';
import { isQualifiedForSignatures } from '../../pki/cert-info.js';
import { parseCert } from '../../pki/cms.js';
import { checkCms, type CmsCheck } from '../../pki/verify-cms.js';
import { problem, type Problem } from '../../pki/problems.js';
import { apiError } from '../../lib/errors.js';
import { PdfFile } from './pdf-file.js';
import { PdfRef, PdfStream, PdfSyntaxError, type PdfValue } from './pdf-syntax.js';
import { changesAfter, findSignatures, type FoundSignature } from './signatures.js';
import type { PadesLevel } from './long-term.js';
import type { PdfVerification, SignatureLevel, SignatureReport, VerifyTrust } from './verify.js';

export async function verifyInWorker(bytes: Uint8Array, trust: VerifyTrust): Promise<PdfVerification> {
  let file: PdfFile;
  let found: FoundSignature[];
  try {
    file = new PdfFile(bytes);
    if (file.trailer.get('Encrypt') !== undefined) throw apiError('invalid_file', { meta: { reason: 'encrypted' } });
    found = findSignatures(file);
  } catch (err) {
    if (err instanceof PdfSyntaxError) throw apiError('invalid_file', { meta: { reason: err.message } });
    throw err;
  }
  const dss = dssMaterial(file);
  const checks: { sig: FoundSignature; cms: CmsCheck }[] = [];
  for (const sig of found) {
    const parts = sig.rangeOk
      ? [bytes.subarray(0, sig.byteRange[1]), bytes.subarray(sig.byteRange[2], sig.byteRange[2] + sig.byteRange[3])]
      : [];
    checks.push({ sig, cms: await checkCms(sig.contents, parts, sig.kind) });
  }
  const candidates = [...dss.certs, ...checks.flatMap((c) => c.cms.certsDer)];
  const crls = [...dss.crls, ...trust.crlsDer];
  const now = new Date(trust.nowMs);

  // A document timestamp proves everything before it existed at its time: each signature and timestamp is judged
  // at the time of the next document timestamp after it (or now), its signing certificate at its proven time.
  const docTimes = checks
    .filter((c) => c.sig.kind === 'document_timestamp' && c.cms.intact && c.cms.timestamp?.genTime)
    .map((c) => ({ end: c.sig.revision, at: new Date(c.cms.timestamp!.genTime!) }));
  const nextProof = (revision: number) => docTimes.find((d) => d.end > revision)?.at ?? now;

  const signatures: SignatureReport[] = [];
  // A signature that does not verify reaches no level, and neither does the file.
  const levels: (PadesLevel | null)[] = [];
  for (const { sig, cms } of checks) {
    const problems: Problem[] = [...cms.problems];
    if (!sig.rangeOk) problems.push(problem('byte_range_invalid'));
    const intact = cms.intact && sig.rangeOk;
    const proven = cms.timestamp?.intact && cms.timestamp.genTime ? new Date(cms.timestamp.genTime) : null;
    const purpose = sig.kind === 'signature' ? 'signature' : 'timestamp';
    let trusted = false;
    let chain: ChainCheck | null = null;
    if (cms.signerCertDer) {
      const at = sig.kind === 'signature' ? (proven ?? nextProof(sig.revision)) : nextProof(sig.revision);
      chain = await checkChain(cms.signerCertDer, {
        at,
        candidatesDer: candidates,
        crlsDer: crls,
        anchorsDer: trust.anchorsDer,
        purpose,
      });
      problems.push(...chain.problems);
      trusted = intact && chain.trusted;
      // The signature's own timestamp must come from a trusted TSA too, judged when the next proof says.
      if (sig.kind === 'signature' && cms.timestamp?.signerCertDer) {
        const tsa = await checkChain(cms.timestamp.signerCertDer, {
          at: nextProof(sig.revision),
          candidatesDer: candidates,
          crlsDer: crls,
          anchorsDer: trust.anchorsDer,
          purpose: 'timestamp',
        });
        problems.push(...tsa.problems);
        trusted &&= tsa.trusted && cms.timestamp.intact;
      }
    }
    if (sig.kind === 'signature') levels.push(intact ? levelOf(sig, cms, dss, chain, docTimes) : null);
    signatures.push({
      kind: sig.kind,
      field: sig.field,
      intact,
      signer: cms.signer,
      signed_at:
        (sig.kind === 'signature'
          ? (proven?.toISOString() ?? cms.signingTime ?? claimed(sig))
          : cms.timestamp?.genTime) ?? null,
      time_proven: sig.kind === 'document_timestamp' ? intact : Boolean(proven),
      trusted,
      level: sig.kind === 'document_timestamp' ? null : signatureLevel(intact && trusted, cms.signerCertDer),
      problems: dedupe(problems),
      revision_sha256: sig.revisionSha256,
    });
  }

  const lastSignature = [...found].reverse().find((s) => s.kind === 'signature' && s.revision >= 0);
  const changes = lastSignature ? changesAfter(file, lastSignature.revision) : [];
  const problems: Problem[] = changes.map((c) =>
    problem(
      c.deleted
        ? 'deleted_object'
        : c.what === 'page'
          ? 'changed_page'
          : c.what === 'annotation'
            ? 'changed_annotation'
            : 'changed_object',
      {
        object: String(c.object),
      },
    ),
  );
  if (!found.some((s) => s.kind === 'signature')) problems.unshift(problem('not_signed'));
  const modified = changes.length > 0;
  const allIntact = signatures.every((s) => s.intact);
  const revoked = signatures.some((s) => s.problems.some((p) => p.code === 'cert_revoked'));
  const verdict =
    !allIntact || modified || revoked
      ? 'invalid'
      : signatures.some((s) => s.kind === 'signature') && signatures.every((s) => s.trusted)
        ? 'valid'
        : 'indeterminate';
  const rank: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
  const level =
    levels.length && !levels.includes(null)
      ? (levels as PadesLevel[]).reduce((a, b) => (rank.indexOf(a) <= rank.indexOf(b) ? a : b))
      : null;
  return { verdict, pades_level: level, modified_after_signing: modified, problems: dedupe(problems), signatures };
}

/** B-B, then B-T with a proven time, B-LT when later DSS data lets the seal's path be checked offline, B-LTA with a document timestamp over that. */
function levelOf(
  sig: FoundSignature,
  cms: CmsCheck,
  dss: DssMaterial,
  chain: ChainCheck | null,
  docTimes: { end: number; at: Date }[],
): PadesLevel {
  const timestamped = Boolean(cms.timestamp?.intact) || docTimes.some((d) => d.end > sig.revision);
  if (!timestamped) return 'B-B';
  const dssRevision = dss.firstRevisionAfter(sig.revision);
  if (dssRevision < 0 || !chain || chain.revocation !== 'good' || !dss.covers(chain.chainDer)) return 'B-T';
  return docTimes.some((d) => d.end > dssRevision) ? 'B-LTA' : 'B-LT';
}

/** A QES needs more than a qualified certificate: the signature must verify and its path reach a trusted anchor. */
function signatureLevel(intactAndTrusted: boolean, signerCertDer: Uint8Array | null): SignatureLevel {
  if (!intactAndTrusted || !signerCertDer) return 'advanced';
  try {
    return isQualifiedForSignatures(parseCert(signerCertDer)) ? 'qes' : 'advanced';
  } catch {
    return 'advanced';
  }
}

type DssMaterial = {
  certs: Uint8Array[];
  crls: Uint8Array[];
  /** The first revision after `revision` that writes a DSS; -1 when none. */
  firstRevisionAfter(revision: number): number;
  /** Every certificate of the path but the anchor is in the DSS. */
  covers(chainDer: Uint8Array[]): boolean;
};

function dssMaterial(file: PdfFile): DssMaterial {
  const certs: Uint8Array[] = [];
  const crls: Uint8Array[] = [];
  const rootOf = (i: number) => file.dict(file.sections[i].trailer.get('Root') ?? file.trailer.get('Root'), i);
  const dssRef = (i: number) => rootOf(i)?.get('DSS');
  const read = (v: PdfValue | undefined, out: Uint8Array[]) => {
    const list = file.resolve(v);
    if (!Array.isArray(list)) return;
    for (const r of list) {
      const s = file.resolve(r);
      if (s instanceof PdfStream) {
        try {
          out.push(file.decode(s));
        } catch {
          // An unreadable stream is as good as absent.
        }
      }
    }
  };
  const dss = file.dict(dssRef(file.sections.length - 1));
  read(dss?.get('Certs'), certs);
  read(dss?.get('CRLs'), crls);
  const key = (b: Uint8Array) => Buffer.from(b).toString('base64');
  const held = new Set(certs.map(key));
  return {
    certs,
    crls,
    firstRevisionAfter(revision) {
      for (let i = Math.max(revision + 1, 0); i < file.sections.length; i++) {
        const d = dssRef(i);
        const root = file.sections[i].trailer.get('Root');
        const written = d instanceof PdfRef ? d.num : root instanceof PdfRef ? root.num : -1;
        if (d !== undefined && file.sections[i].entries.has(written)) return i;
      }
      return -1;
    },
    covers: (chainDer) => chainDer.slice(0, -1).every((c) => held.has(key(c))),
  };
}

const claimed = (sig: FoundSignature): string | null => {
  const m = /^D:(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})/.exec(sig.claimedTime ?? '');
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.000Z` : null;
};

const dedupe = (list: Problem[]) => [...new Map(list.map((p) => [JSON.stringify(p), p])).values()];
