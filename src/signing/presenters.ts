// The wire format of documents and signing requests, written once. Signer links never appear here.
import { iso } from '../lib/clock.js';
import type { DocumentRow, RequestRow } from '../documents/documents.repo.js';

const t = (ms: number | null) => (ms === null ? null : iso(ms));

export const presentSigner = (r: RequestRow) => ({ email: r.email, role: r.role, name: r.name, slot: r.slot });

export const presentRequestBrief = (r: RequestRow) => ({
  id: r.id,
  status: r.status,
  signer: presentSigner(r),
  expires_at: iso(r.expires_at),
});

export const presentRequest = (r: RequestRow) => ({
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
});

export const documentUrls = (baseUrl: string, id: string) => ({
  signed_pdf_url: `${baseUrl}/v1/documents/${id}/signed`,
  audit_trail_url: `${baseUrl}/v1/documents/${id}/audit-trail`,
});

export const presentDocument = (d: DocumentRow, requests: RequestRow[], baseUrl: string) => ({
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
  ...(d.status === 'completed' ? documentUrls(baseUrl, d.id) : {}),
  signing_requests: requests.map(presentRequest),
});
