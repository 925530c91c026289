// What the API reads about documents and signing requests, each scoped to the caller's workspace (404 otherwise),
// and the placement dry run.
import { listAudit, verifyChain } from '../documents/audit.repo.js';
import { apiError } from '../lib/errors.js';
import { fileOf } from './file-input.js';
import {
  auditCertificateEvents,
  auditPageInput,
  presentAuditTrail,
  presentDocument,
  presentRequest,
} from './presenters.js';
import type { PreviewBody } from './signing.schemas.js';
import { findDocument, findRequest, listRequests } from './signing.repo.js';
import type { SigningDeps } from './signing.service.js';
import { auditFace } from './audit-face.js';

async function mustFind(deps: SigningDeps, workspaceId: string, id: string) {
  const d = await findDocument(deps.db.kysely, workspaceId, id);
  if (!d) throw apiError('not_found');
  return d;
}

export async function getDocument(deps: SigningDeps, workspaceId: string, id: string) {
  const d = await mustFind(deps, workspaceId, id);
  return presentDocument(d, await listRequests(deps.db.kysely, d.id), deps.config.baseUrl);
}

export async function getRequest(deps: SigningDeps, workspaceId: string, id: string) {
  const r = await findRequest(deps.db.kysely, workspaceId, id);
  if (!r) throw apiError('not_found');
  return presentRequest(r);
}

/** The sealed PDF; 409 document_not_completed before completion. */
export async function signedPdf(deps: SigningDeps, workspaceId: string, id: string) {
  const d = await mustFind(deps, workspaceId, id);
  if (d.status !== 'completed' || !d.signed_blob)
    throw apiError('document_not_completed', { meta: { status: d.status } });
  return { id: d.id, sha256: d.signed_sha256, pdf: await deps.blobs.get(d.signed_blob) };
}

/** Every audit entry of the document, and whether the hash chain verifies. */
export async function auditTrail(deps: SigningDeps, workspaceId: string, id: string) {
  const d = await mustFind(deps, workspaceId, id);
  const entries = await listAudit(deps.db.kysely, d.id);
  return presentAuditTrail(d, entries, verifyChain(d.id, entries) === null);
}

/** The audit certificate: the audit page's content plus the whole event log, as a PDF. */
export async function auditCertificate(deps: SigningDeps, workspaceId: string, id: string) {
  const d = await mustFind(deps, workspaceId, id);
  const [entries, requests] = [await listAudit(deps.db.kysely, d.id), await listRequests(deps.db.kysely, d.id)];
  const info = {
    ...auditPageInput(d, requests, d.completed_at ?? deps.clock.now()),
    face: await auditFace(deps, d.workspace_id),
  };
  return { id: d.id, pdf: await deps.pdf.auditCertificate(info, auditCertificateEvents(entries)) };
}

/** Every anchor found in a PDF with its box, and every problem (not just the first); nothing is created. */
export async function previewPlacement(deps: SigningDeps, body: PreviewBody) {
  const bytes = await fileOf(deps, body);
  const info = await deps.pdf.inspect(bytes);
  const r = await deps.pdf.preview(bytes, body.roles);
  return { page_count: info.pageCount, anchors: r.anchors, problems: r.problems };
}
