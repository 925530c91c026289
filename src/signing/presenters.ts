// The wire format of documents and signing requests, and of their audit-trail and event values, written once.
// Signer links never appear here.
import type { AuditEntry } from '../documents/audit.repo.js';
import type { AuditEvent, AuditInfo, AuditQualified } from '../documents/pdf/audit-page.js';
import type { Field } from '../documents/pdf/types.js';
import type { AuthContext } from '../http/request-context.js';
import { localeOrDefault } from '../i18n/i18n.js';
import { iso } from '../lib/clock.js';
import type { EventFields } from '../webhooks/events.js';
import { policyOf } from './reminder-policy.js';
import type { DocumentRow, RequestRow } from './signing.repo.js';
import { methodOf } from './verification.js';
import type { AuditTrailOut, DocumentOut, RequestBrief, RequestOut } from './signing.schemas.js';

const t = (ms: number | null) => (ms === null ? null : iso(ms));

export const presentSigner = (r: RequestRow) => ({ email: r.email, role: r.role, name: r.name, slot: r.slot });

export const presentRequestBrief = (r: RequestRow): RequestBrief => ({
  id: r.id,
  status: r.status,
  signer: presentSigner(r),
  expires_at: iso(r.expires_at),
});

export const presentRequest = (r: RequestRow): RequestOut => ({
  id: r.id,
  document_id: r.document_id,
  status: r.status,
  signer: presentSigner(r),
  expires_at: iso(r.expires_at),
  sent_at: t(r.sent_at),
  viewed_at: t(r.viewed_at),
  signed_at: t(r.signed_at),
  declined_at: t(r.declined_at),
  decline_reason: r.decline_reason,
  qualified_signature: r.qes ? (JSON.parse(r.qes) as RequestOut['qualified_signature']) : null,
});

/** A downloaded file's name: the title, made safe for any file system, and what the file is (`signed`, `audit`). */
export const downloadName = (d: Pick<DocumentRow, 'title' | 'id'>, kind: 'signed' | 'audit'): string => {
  const stem = d.title
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100);
  return `${stem || d.id}-${kind}.pdf`;
};

/** Content-Disposition naming a download: the id as the plain fallback, the title-based name as RFC 8187 UTF-8. */
export const attachment = (d: Pick<DocumentRow, 'title' | 'id'>, kind: 'signed' | 'audit'): string => {
  const utf8 = encodeURIComponent(downloadName(d, kind)).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${d.id}-${kind}.pdf"; filename*=UTF-8''${utf8}`;
};

export const documentUrls = (baseUrl: string, id: string) => ({
  signed_pdf_url: `${baseUrl}/v1/documents/${id}/signed`,
  audit_trail_url: `${baseUrl}/v1/documents/${id}/audit-trail`,
});

export const presentDocument = (d: DocumentRow, requests: RequestRow[], baseUrl: string): DocumentOut => ({
  id: d.id,
  status: d.status,
  title: d.title,
  locale: d.locale,
  signing_order: d.signing_order,
  placement: d.placement,
  file_name: d.file_name,
  page_count: d.page_count,
  sha256: d.original_sha256,
  signed_sha256: d.signed_sha256,
  created_at: iso(d.created_at),
  expires_at: iso(d.expires_at),
  completed_at: t(d.completed_at),
  // Seals made before long-term signatures (issue 21) have no recorded level: they were all B-T.
  pades_level: d.status === 'completed' ? ((d.pades_level ?? 'B-T') as DocumentOut['pades_level']) : null,
  template_id: d.template_id ?? null,
  template_version: d.template_version ?? null,
  signature_level: d.signature_level === 'qes' ? 'qes' : 'ses',
  reminders: policyOf(d),
  ...(d.status === 'completed' ? documentUrls(baseUrl, d.id) : {}),
  signing_requests: requests.map(presentRequest),
});

export const presentAuditTrail = (d: DocumentRow, entries: AuditEntry[], chainValid: boolean): AuditTrailOut => ({
  document_id: d.id,
  status: d.status,
  original_sha256: d.original_sha256,
  signed_sha256: d.signed_sha256,
  chain_valid: chainValid,
  head_hash: entries.at(-1)?.hash ?? '',
  entries,
});

/** What the signing page's script reads (`/sign/<token>/info`): never another signer's data. */
export const presentSignerInfo = (v: {
  state: string;
  document: DocumentRow;
  request: RequestRow;
  workspaceName: string;
  fields: Field[];
}) => ({
  state: v.state,
  document: {
    title: v.document.title,
    page_count: v.document.page_count,
    locale: v.document.locale,
    workspace: v.workspaceName,
  },
  signer: { name: v.request.name, email: v.request.email, role: v.request.role },
  fields: v.fields,
});

/**
 * `signing_request.sent`: a signer was invited as their document opened (for a template instance, its first
 * recipient released, `source: "template_instance"`); later releases emit none.
 */
export const sentEventFields = (
  doc: Pick<DocumentRow, 'id' | 'locale'>,
  r: RequestRow,
  source: EventFields<'signing_request.sent'>['source'],
): EventFields<'signing_request.sent'> => ({
  signing_request_id: r.id,
  document_id: doc.id,
  signer: presentSigner(r),
  locale: doc.locale,
  source,
});

/** The signer as webhook payloads carry it (signed, viewed, declined, expired). */
export const eventSigner = (r: RequestRow) => ({ email: r.email, name: r.name });

/** Audit-trail actors: `api_key:<id>`, `signer:<email>` or `system`. */
/** Who acted, as the audit trail and events name them: the dashboard person, else the API key. */
export const keyActor = (auth: AuthContext) => auth.actor ?? `api_key:${auth.keyId}`;
export const signerActor = (r: RequestRow) => `signer:${r.email || r.phone}`;

/** The verification a signer passed, for the audit page (null: none asked, or not passed). */
const verifiedOf = (r: RequestRow) => {
  const method = methodOf(r);
  return method && r.verified_at != null ? { method, at: iso(r.verified_at) } : null;
};

/** The qualified signature a signer made (`signing_requests.qes`, issue 23), for the audit page; null: none. */
const qualifiedOf = (r: RequestRow): AuditQualified | null => {
  if (!r.qes) return null;
  const q = JSON.parse(r.qes) as Partial<AuditQualified>;
  return { provider: q.provider ?? '', subject: q.subject ?? '', issuer: q.issuer ?? '', serial: q.serial ?? '' };
};

/** What the audit page and certificate print about a document and its signers. */
export function auditPageInput(doc: DocumentRow, requests: RequestRow[], completedAt: number): AuditInfo {
  return {
    locale: localeOrDefault(doc.locale),
    documentId: doc.id,
    title: doc.title,
    originalSha256: doc.original_sha256,
    signers: requests.map((r) => ({
      name: r.name,
      email: r.email || (r.phone ?? ''),
      role: r.role,
      ip: r.sign_ip ?? r.view_ip,
      userAgent: r.sign_ua ?? r.view_ua,
      sentAt: t(r.sent_at),
      viewedAt: t(r.viewed_at),
      signedAt: t(r.signed_at),
      verified: verifiedOf(r),
      qualified: qualifiedOf(r),
    })),
    completedAt: iso(completedAt),
  };
}

/** The audit chain's entries as the certificate's event log prints them. */
export const auditCertificateEvents = (entries: AuditEntry[]): AuditEvent[] =>
  entries.map((e) => ({
    at: e.at,
    event: e.action,
    actor: e.actor ?? null,
    ip: e.ip ?? null,
    detail: e.detail ? JSON.stringify(e.detail) : null,
  }));
