// The audit trail as PDF: appended to the signed document (appendAuditPage) or as a standalone certificate with
// the event log (renderAuditCertificate). Guarantees: every value is printed in full — long values (user agents,
// hashes, e-mails) wrap, and the content flows onto as many pages as it needs; names in every script render
// (fonts.ts), and a value with characters no font has is followed by their code points; each page carries "page i
// of n"; the labels are in the document's language (i18n `audit.*`,
// English when it has none), the values as recorded. Appended pages take the last page's shown size (Letter if
// that is smaller than 400 × 500 pt). By default the file is rewritten by pdf-lib without object streams, for the
// seal's incremental update; with `incremental: true` the pages are appended as one incremental update instead
// (pdflib-incremental.ts), so the input stays a byte prefix and signatures already in it keep verifying.
// The sending workspace's face (issue 27): its logo heads the first page and its hosting region is a row of the
// document's facts; a logo that cannot be drawn is left out, never failing the page (it is decoration, the seal is not).
// This module is the calling thread's side and loads no PDF library; the layout and drawing are audit-page.work.ts,
// in a worker thread.
import type { Locale } from '../../i18n/i18n.js';
import { runPdfTaskOr } from './pool.js';

export const AUDIT_TIMEOUT_MS = 30_000;

export type AuditSigner = {
  name: string;
  email: string;
  role: string;
  ip: string | null;
  userAgent: string | null;
  sentAt: string | null;
  viewedAt: string | null;
  signedAt: string | null;
  /** Signer verification (issue 22): the method the signer passed and when; absent when none was asked. */
  verified?: { method: 'email_code' | 'sms_code'; at: string } | null;
  /** Qualified signature (issue 23): the provider that signed and the signer's certificate; absent for others. */
  qualified?: AuditQualified | null;
};

export type AuditQualified = { provider: string; subject: string; issuer: string; serial: string };

/** What the audit page shows of the sending workspace; each part optional. */
export type AuditFace = {
  logo?: { bytes: Uint8Array; type: 'image/png' | 'image/jpeg' } | null;
  /** Where the workspace's documents live (SIGNET_REGION when it was created). */
  region?: string | null;
};

export type AuditInfo = {
  /** The language of the labels: the document's. */
  locale: Locale;
  face?: AuditFace | null;
  documentId: string;
  title: string;
  originalSha256: string;
  signers: AuditSigner[];
  completedAt: string | null;
};

export type AuditEvent = {
  at: string;
  event: string;
  actor?: string | null;
  ip?: string | null;
  detail?: string | null;
};

export type AuditCertificateInput = AuditInfo & { events: AuditEvent[] };

export function appendAuditPage(
  bytes: Uint8Array,
  audit: AuditInfo,
  opts: { timeoutMs?: number; incremental?: boolean } = {},
): Promise<Uint8Array> {
  return runPdfTaskOr<Uint8Array>(
    { op: 'audit_page', bytes, audit, incremental: opts.incremental },
    opts.timeoutMs ?? AUDIT_TIMEOUT_MS,
  );
}

export function renderAuditCertificate(
  input: AuditCertificateInput,
  opts: { timeoutMs?: number } = {},
): Promise<Uint8Array> {
  return runPdfTaskOr<Uint8Array>({ op: 'audit_certificate', input }, opts.timeoutMs ?? AUDIT_TIMEOUT_MS);
}
