// Verification of a PDF someone holds: the PDF engine's report (worker threads, nothing stored), with the Signet
// document it is, when this instance sealed it, and whether that document's audit chain still verifies. Problems
// are put into words in the caller's language (English for the API).
import { createHash } from 'node:crypto';
import { apiError } from '../lib/errors.js';
import type { Db } from '../db/db.js';
import { listAudit, verifyChain } from '../documents/audit.repo.js';
import type { PdfEngine } from '../documents/pdf/engine.js';
import type { PdfVerification } from '../documents/pdf/verify.js';
import type { Locale } from '../i18n/i18n.js';
import type { Clock } from '../lib/clock.js';
import { iso } from '../lib/clock.js';
import { problemText } from '../pki/problems.js';
import type { TrustStore } from '../pki/trust.js';
import type { VerificationOut } from './verification.schemas.js';
import { findSealedDocument } from './verification.repo.js';
import { brandOf, type Brand } from '../workspaces/brand.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';

export type VerificationDeps = { db: Db; clock: Clock; pdf: PdfEngine; trust: TrustStore };

export async function verifyFile(
  deps: VerificationDeps,
  bytes: Uint8Array,
  locale: Locale = 'en',
): Promise<VerificationOut> {
  return (await check(deps, bytes, locale, false)).report;
}

/**
 * The report, and the brand of the workspace that sent the document it names (the /verify page shows it; the API's
 * report stays the interface's). `brand` is null when the file is no live Signet document.
 */
export async function verifyWithSender(
  deps: VerificationDeps,
  bytes: Uint8Array,
  locale: Locale = 'en',
): Promise<{ report: VerificationOut; brand: Brand | null }> {
  return check(deps, bytes, locale, true);
}

async function check(deps: VerificationDeps, bytes: Uint8Array, locale: Locale, withBrand: boolean) {
  const trust = await deps.trust.verificationTrust();
  const report = await deps.pdf.verify(bytes, { ...trust, nowMs: deps.clock.now() });
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const found = await documentOf(deps, report, sha256, withBrand);
  return { report: present(report, sha256, found?.document ?? null, locale), brand: found?.brand ?? null };
}

async function documentOf(deps: VerificationDeps, report: PdfVerification, sha256: string, withBrand: boolean) {
  const hashes = report.signatures.filter((s) => s.kind === 'signature').map((s) => s.revision_sha256);
  const doc = await findSealedDocument(deps.db.kysely, hashes, sha256);
  if (!doc) return null;
  const ws = withBrand && doc.workspace_id !== null ? await findWorkspace(deps.db.kysely, doc.workspace_id) : undefined;
  return { document: await documentFacts(deps, doc), brand: ws ? brandOf(ws) : null };
}

async function documentFacts(
  deps: VerificationDeps,
  doc: NonNullable<Awaited<ReturnType<typeof findSealedDocument>>>,
): Promise<NonNullable<VerificationOut['document']>> {
  const completed_at = doc.completed_at === null ? null : iso(Number(doc.completed_at));
  // A purged document's record is gone: no title, no audit chain to check; its tombstone says when.
  if (doc.purged_at !== null)
    return { id: doc.id, title: '', completed_at, audit_chain_valid: false, purged_at: iso(Number(doc.purged_at)) };
  const entries = await listAudit(deps.db.kysely, doc.id);
  return {
    id: doc.id,
    title: doc.title,
    completed_at,
    audit_chain_valid: verifyChain(doc.id, entries) === null,
    purged_at: null,
  };
}

function present(
  r: PdfVerification,
  sha256: string,
  document: VerificationOut['document'],
  locale: Locale,
): VerificationOut {
  return {
    verdict: r.verdict,
    pades_level: r.pades_level,
    modified_after_signing: r.modified_after_signing,
    sha256,
    document,
    problems: r.problems.map((p) => problemText(locale, p)),
    problem_codes: r.problems.map((p) => p.code),
    signatures: r.signatures.map((s) => ({
      kind: s.kind,
      field: s.field,
      intact: s.intact,
      signer: s.signer,
      signed_at: s.signed_at,
      time_proven: s.time_proven,
      trusted: s.trusted,
      level: s.level,
      problems: s.problems.map((p) => problemText(locale, p)),
      problem_codes: s.problems.map((p) => p.code),
    })),
  };
}
/** The uploaded bytes, or 400 invalid_file when there are none (no body, or a JSON one). */
export function pdfBody(body: unknown): Uint8Array {
  if (!Buffer.isBuffer(body) || body.length === 0)
    throw apiError('invalid_file', { meta: { reason: 'send the PDF as the body, Content-Type: application/pdf' } });
  return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
}
