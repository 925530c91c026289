// Completion, as a lease-claim job (jobs/runner.ts): stamp every signature and field, append the audit page, seal
// (PAdES B-LTA where the validation data allows, else B-T with the reason) and only then mark the document completed and emit `document.completed`, in one transaction guarded
// by this worker's seal claim. Guarantees: a crash mid-seal leaves the claim to lapse and another worker redoes the
// work; the guarded update means the event is emitted once; a failure backs off and retries, so a document is never
// left pending without a retry scheduled.
import { doubling, nextAttemptAt } from '../jobs/retry.js';
import { createRunner, type Runner } from '../jobs/runner.js';
import { sha256Hex } from '../lib/crypto.js';
import { describeError, silentLogger, type Logger } from '../lib/logger.js';
import { iso } from '../lib/clock.js';
import { LTV_RENEW_BEFORE_MS } from '../limits.js';
import type { Sealer } from '../documents/pdf/seal.js';
import type { Stamp, StampValue } from '../documents/pdf/stamp.js';
import type { Field } from '../documents/pdf/types.js';
import { signerInputOf, stampText } from '../documents/fields.js';
import { auditPageInput, documentUrls } from './presenters.js';
import { auditFace } from './audit-face.js';
import {
  claimSealJobs,
  completeSealed,
  findDocumentById,
  listRequests,
  recordSealFailure,
  releaseSealClaim,
  type DocumentRow,
  type RequestRow,
} from './signing.repo.js';
import { ltvAlgorithms } from './renewal.repo.js';
import type { SigningDeps } from './signing.service.js';
import { mailCompletion } from './copy.service.js';
import { inTransaction } from './transition.js';

export type SealingDeps = Pick<SigningDeps, 'db' | 'clock' | 'blobs' | 'emit' | 'mail' | 'sms' | 'wake' | 'pdf'> & {
  sealer: Pick<Sealer, 'seal'>;
  baseUrl: string;
  workerId: string;
  logger?: Logger;
};

const LEASE_MS = 5 * 60_000;
/** Stamping, the audit page and the seal each run under their own worker time limit; together well under this. */
const SEAL_TIMEOUT_MS = 2 * 60_000;
/** 10 s after the first failure, doubling, at most an hour apart. */
const SEAL_RETRY = doubling(10_000, 3600_000);

const initialsOf = (name: string) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .map((p) => [...p][0]!.toUpperCase())
    .join('');

/** Each signer's values as stamps; `pngs`: drawn signatures by request id. */
export function stampsFor(doc: DocumentRow, requests: RequestRow[], pngs: Map<string, Uint8Array>): Stamp[] {
  const byRole = new Map(requests.map((r) => [r.role, r]));
  const out: Stamp[] = [];
  for (const field of JSON.parse(doc.fields) as Field[]) {
    const r = byRole.get(field.role);
    if (!r) continue;
    const png = pngs.get(r.id);
    const typed = r.signature_text ?? r.name;
    let value: StampValue;
    if (field.type === 'signature') value = png ? { kind: 'drawn', png } : { kind: 'typed', text: typed };
    else if (field.type === 'initials')
      value = png ? { kind: 'drawn', png } : { kind: 'typed', text: initialsOf(typed) };
    else if (!signerInputOf(field))
      value = { kind: 'date', text: r.signed_at === null ? '' : iso(r.signed_at).slice(0, 10) };
    else {
      const given = (JSON.parse(r.field_values ?? '{}') as Record<string, unknown>)[field.id];
      const text = stampText(given);
      if (text === '') continue;
      value = field.type === 'checkbox' ? { kind: 'check' } : { kind: field.type === 'date' ? 'date' : 'text', text };
    }
    out.push({ field, value });
  }
  return out;
}

/**
 * The file sealing starts from, with every signer's values on it. A qualified document already carries them: each
 * qualified signer's revision stamped their own (qes/), so the audit page and the seal are appended incrementally
 * and every signer's signature keeps verifying.
 */
async function signedContent(deps: SealingDeps, doc: DocumentRow, requests: RequestRow[], completedAt: number) {
  const audit = { ...auditPageInput(doc, requests, completedAt), face: await auditFace(deps, doc.workspace_id) };
  if (doc.signature_level === 'qes') {
    const current = await deps.blobs.get(doc.qes_blob ?? doc.prepared_blob);
    return { pdf: await deps.pdf.appendAuditPage(current, audit, { incremental: true }), incremental: true };
  }
  const pngs = new Map<string, Uint8Array>();
  for (const r of requests) if (r.signature_blob) pngs.set(r.id, await deps.blobs.get(r.signature_blob));
  const prepared = await deps.blobs.get(doc.prepared_blob);
  const stamped = await deps.pdf.stamp(prepared, stampsFor(doc, requests, pngs));
  return { pdf: await deps.pdf.appendAuditPage(stamped, audit), incremental: false };
}

async function sealOne(deps: SealingDeps, id: string): Promise<boolean> {
  const doc = await findDocumentById(deps.db.kysely, id);
  if (!doc || doc.seal_state !== 'pending' || doc.seal_claimed_by !== deps.workerId) return false;
  const requests = await listRequests(deps.db.kysely, id);
  const completedAt = deps.clock.now();
  const content = await signedContent(deps, doc, requests, completedAt);
  const sealed = await deps.sealer.seal(content.pdf, {
    incremental: content.incremental,
    name: 'Signet',
    // A document generated from a template has no signers: the seal certifies the file as generated.
    reason: (requests.length ? `Signed by all parties: ${doc.title}` : `Generated: ${doc.title}`).slice(0, 200),
  });
  if (sealed.padesNote)
    (deps.logger ?? silentLogger).warn(
      { document_id: id, pades_level: sealed.padesLevel, pades_note: sealed.padesNote },
      'sealed below or without full long-term validation data',
    );
  const sha256 = sha256Hex(sealed.pdf);
  const finalReq = requests.find((r) => r.id === doc.final_request_id) ?? requests.at(-1);
  const seal = {
    sha256,
    cert_serial: sealed.certSerial,
    tsa_provider: sealed.tsaProvider,
    tsa_signed_at: sealed.tsaSignedAt,
  };

  return inTransaction(deps, async (tx) => {
    const completed = await completeSealed(tx.trx, id, deps.workerId, {
      signed_blob: await deps.blobs.put(sealed.pdf, 'signed', tx.trx),
      signed_sha256: sha256,
      cert_serial: sealed.certSerial,
      tsa_provider: sealed.tsaProvider,
      tsa_signed_at: sealed.tsaSignedAt,
      pades_level: sealed.padesLevel,
      pades_note: sealed.padesNote,
      seal_revision_sha256: sealed.sealRevisionSha256,
      ltv_renew_at: sealed.lastTimestamp ? sealed.lastTimestamp.certNotAfter - LTV_RENEW_BEFORE_MS : null,
      ltv_algorithms: sealed.lastTimestamp ? ltvAlgorithms(sealed.lastTimestamp.algorithms) : null,
      completed_at: tx.now,
      seal_last_error: null,
      updated_at: tx.now,
    });
    if (!completed) return false;
    await tx.audit(doc, {
      action: 'document.completed',
      actor: 'system',
      detail: {
        ...seal,
        pades_level: sealed.padesLevel,
        ...(sealed.padesNote ? { pades_note: sealed.padesNote } : {}),
      },
    });
    await tx.emit('document.completed', doc.workspace_id, {
      signing_request_id: finalReq?.id ?? null,
      document_id: id,
      signer: finalReq ? { email: finalReq.email, name: finalReq.name } : null,
      ...documentUrls(deps.baseUrl, id),
      ...seal,
    });
    await mailCompletion(tx, doc, requests, deps.baseUrl);
    return true;
  });
}

/** The sealing job: four documents a batch, one at a time (each seal already uses the PDF and seal worker pools). */
export function createSealingRunner(deps: SealingDeps): Runner {
  const logger = deps.logger ?? silentLogger;
  return createRunner(
    {
      claim: async (o) => (await claimSealJobs(deps.db, o)).map((id) => ({ id, claimExpiresAt: o.now + o.leaseMs })),
      async work({ id }) {
        try {
          return await sealOne(deps, id);
        } catch (err) {
          logger.error({ err: describeError(err), document_id: id }, 'sealing failed; will retry');
          const doc = await findDocumentById(deps.db.kysely, id);
          const retryAt = nextAttemptAt(SEAL_RETRY, doc?.seal_attempts ?? 1, deps.clock.now())!;
          // The claim is kept but lapses at the retry time: then any worker (this one included) retries.
          await recordSealFailure(deps.db, id, deps.workerId, describeError(err), retryAt);
          return false;
        }
      },
      release: async ({ id }) => void (await releaseSealClaim(deps.db, id, deps.workerId)),
    },
    {
      name: 'sealing',
      clock: deps.clock,
      workerId: deps.workerId,
      logger,
      leaseMs: LEASE_MS,
      timeoutMs: SEAL_TIMEOUT_MS,
      batchSize: 4,
      concurrency: 1,
      pollIntervalMs: 1000,
    },
  );
}
