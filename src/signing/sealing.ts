// Completion: stamp every signature and field, append the audit page, seal (PAdES B-T) and only then mark the
// document completed and emit `document.completed`, in one transaction guarded by this worker's seal claim.
// A crash mid-seal leaves the claim to expire and another worker redoes the work; the guarded update means the
// event is emitted once. Failures back off and retry; a document is never left pending without a retry scheduled.
import type { Db } from '../db/db.js';
import { iso, type Clock } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import type { BlobStore } from '../documents/blob-store.js';
import { appendAudit } from '../documents/audit.repo.js';
import { claimSealJobs, findDocumentById, listRequests, type DocumentRow, type RequestRow } from '../documents/documents.repo.js';
import type { Emit } from '../webhooks/outbox.repo.js';
import type { Locale } from '../mail/locales.js';
import { documentUrls } from './presenters.js';
import type { AuditPageInput, MailQueue, PdfEngine, PlacementField, Sealer, StampValue } from './ports.js';

export type SealingDeps = {
  db: Db;
  clock: Clock;
  blobs: BlobStore;
  emit: Emit;
  pdf: PdfEngine;
  sealer: Sealer;
  mail: MailQueue;
  baseUrl: string;
  workerId: string;
  logger?: { info(o: object, m?: string): void; error(o: object, m?: string): void };
  wakeDispatcher(): void;
};

const LEASE_MS = 5 * 60_000;
const MAX_BACKOFF_MS = 3600_000;

const dateText = (ms: number | null) => (ms === null ? '' : iso(ms).slice(0, 10));
const initialsOf = (name: string) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .map((p) => [...p][0]!.toUpperCase())
    .join('');

export function auditPageInput(doc: DocumentRow, requests: RequestRow[], completedAt: number): AuditPageInput {
  return {
    documentId: doc.id,
    title: doc.title,
    originalSha256: doc.original_sha256,
    signers: requests.map((r) => ({
      name: r.name,
      email: r.email,
      role: r.role,
      ip: r.sign_ip ?? r.view_ip,
      userAgent: r.sign_ua ?? r.view_ua,
      sentAt: r.sent_at === null ? null : iso(r.sent_at),
      viewedAt: r.viewed_at === null ? null : iso(r.viewed_at),
      signedAt: r.signed_at === null ? null : iso(r.signed_at),
    })),
    completedAt: iso(completedAt),
  };
}

async function stampsFor(deps: SealingDeps, doc: DocumentRow, requests: RequestRow[]) {
  const byRole = new Map(requests.map((r) => [r.role, r]));
  const pngs = new Map<string, Uint8Array>();
  for (const r of requests) if (r.signature_blob) pngs.set(r.id, await deps.blobs.get(r.signature_blob));
  const out: Array<{ field: PlacementField; value: StampValue }> = [];
  for (const field of JSON.parse(doc.fields) as PlacementField[]) {
    const r = byRole.get(field.role);
    if (!r) continue;
    const png = pngs.get(r.id);
    const typed = r.signature_text ?? r.name;
    let value: StampValue;
    if (field.type === 'signature') value = png ? { kind: 'drawn', png } : { kind: 'typed', text: typed };
    else if (field.type === 'initials') value = png ? { kind: 'drawn', png } : { kind: 'typed', text: initialsOf(typed) };
    else if (field.type === 'date') value = { kind: 'date', text: dateText(r.signed_at) };
    else value = { kind: 'text', text: (JSON.parse(r.field_values ?? '{}') as Record<string, string>)[field.id] ?? '' };
    out.push({ field, value });
  }
  return out;
}

async function sealOne(deps: SealingDeps, id: string): Promise<boolean> {
  const doc = await findDocumentById(deps.db.kysely, id);
  if (!doc || doc.seal_state !== 'pending' || doc.seal_claimed_by !== deps.workerId) return false;
  const requests = await listRequests(deps.db.kysely, id);
  const completedAt = deps.clock.now();
  const prepared = await deps.blobs.get(doc.prepared_blob);
  const stamped = await deps.pdf.stamp(prepared, await stampsFor(deps, doc, requests));
  const withAudit = await deps.pdf.appendAuditPage(stamped, auditPageInput(doc, requests, completedAt));
  const sealed = await deps.sealer.seal(withAudit, { name: 'Signet', reason: `Signed by all parties: ${doc.title}`.slice(0, 200) });
  const sha256 = sha256Hex(sealed.pdf);
  const now = deps.clock.now();
  const finalReq = requests.find((r) => r.id === doc.final_request_id) ?? requests[requests.length - 1]!;

  const done = await deps.db.kysely.transaction().execute(async (trx) => {
    const blob = await deps.blobs.put(sealed.pdf, 'signed', trx);
    const r = await trx
      .updateTable('documents')
      .set({
        status: 'completed',
        seal_state: 'done',
        signed_blob: blob,
        signed_sha256: sha256,
        cert_serial: sealed.certSerial,
        tsa_provider: sealed.tsaProvider,
        tsa_signed_at: sealed.tsaSignedAt,
        completed_at: now,
        seal_last_error: null,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('seal_state', '=', 'pending')
      .where('seal_claimed_by', '=', deps.workerId)
      .where('status', '=', 'in_progress')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await appendAudit(
      trx,
      { documentId: id, workspaceId: doc.workspace_id, action: 'document.completed', actor: 'system', detail: { sha256, cert_serial: sealed.certSerial, tsa_provider: sealed.tsaProvider, tsa_signed_at: sealed.tsaSignedAt } },
      now,
    );
    await deps.emit(trx, 'document.completed', doc.workspace_id, {
      signing_request_id: finalReq.id,
      document_id: id,
      signer: { email: finalReq.email, name: finalReq.name },
      ...documentUrls(deps.baseUrl, id),
      sha256,
      cert_serial: sealed.certSerial,
      tsa_provider: sealed.tsaProvider,
      tsa_signed_at: sealed.tsaSignedAt,
    });
    for (const s of requests) {
      await deps.mail.enqueue(trx, {
        workspaceId: doc.workspace_id,
        documentId: id,
        signingRequestId: s.id,
        to: { email: s.email, name: s.name },
        locale: doc.locale as Locale,
        template: 'completed',
        vars: { documentTitle: doc.title, signerName: s.name },
      });
    }
    return true;
  });
  if (done) {
    deps.wakeDispatcher();
    deps.mail.wake();
  }
  return done;
}

/** Claims and seals every document waiting for it; returns how many were completed. */
export async function runSealJobs(deps: SealingDeps): Promise<number> {
  let completed = 0;
  for (;;) {
    const ids = await claimSealJobs(deps.db, { now: deps.clock.now(), workerId: deps.workerId, leaseMs: LEASE_MS, limit: 4 });
    if (ids.length === 0) return completed;
    for (const id of ids) {
      try {
        if (await sealOne(deps, id)) completed++;
      } catch (err) {
        deps.logger?.error({ err, document_id: id }, 'sealing failed; will retry');
        const doc = await findDocumentById(deps.db.kysely, id);
        const backoff = Math.min(MAX_BACKOFF_MS, 10_000 * 2 ** Math.min(10, (doc?.seal_attempts ?? 1) - 1));
        // Keep the claim but let it lapse after the backoff: then any worker (this one included) retries.
        await deps.db.kysely
          .updateTable('documents')
          .set({ seal_last_error: String((err as Error).message).slice(0, 500), seal_claim_expires_at: deps.clock.now() + backoff })
          .where('id', '=', id)
          .where('seal_claimed_by', '=', deps.workerId)
          .execute();
      }
    }
  }
}
