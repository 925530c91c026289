// The signer's copy (issue 21): on completion every signer with an e-mail address is mailed a link to download the
// sealed PDF and the audit certificate. Guarantees: the link's token is new (not the signing link) and exists only
// in that mail, only its SHA-256 is stored; it opens that one completed document's files, read-only, for
// SIGNER_COPY_VALIDITY_MS from completion and never after; each link sent is in the document's audit chain
// (`signer_copy.sent`, never the token). Withdrawn, declined and expired documents never reach completion, so
// they send none.
import type { Locale } from '../i18n/i18n.js';
import { iso } from '../lib/clock.js';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { linkTokenHash, newLinkToken } from '../lib/tokens.js';
import { SIGNER_COPY_VALIDITY_MS } from '../limits.js';
import { copiesMigrated, findCopyByTokenHash, insertCopy, type CopyRow } from './copy.repo.js';
import { auditCertificate } from './documents.service.js';
import { attachment } from './presenters.js';
import { findDocument, type DocumentRow, type RequestRow } from './signing.repo.js';
import { brandOf, type Brand } from '../workspaces/brand.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import { hasEmail, type SigningDeps } from './signing.service.js';
import type { Tx } from './transition.js';

/**
 * The `completed` mails of a document being completed, inside the completing transaction: each signer with an
 * e-mail address gets a fresh copy link. On a schema without migration 010 (a rolling upgrade), the notice alone.
 */
export async function mailCompletion(tx: Tx, doc: DocumentRow, requests: RequestRow[], baseUrl: string) {
  const withCopy = await copiesMigrated(tx.trx);
  for (const s of requests.filter(hasEmail)) {
    let copy: { baseUrl: string; token: string; expiresAt: number } | undefined;
    if (withCopy) {
      const { token, hash } = newLinkToken();
      const expiresAt = tx.now + SIGNER_COPY_VALIDITY_MS;
      await insertCopy(tx.trx, {
        id: newId('cpy'),
        workspace_id: doc.workspace_id,
        document_id: doc.id,
        signing_request_id: s.id,
        token_hash: hash,
        created_at: tx.now,
        expires_at: expiresAt,
      });
      await tx.audit(doc, {
        action: 'signer_copy.sent',
        actor: 'system',
        signingRequestId: s.id,
        detail: { signing_request_id: s.id, expires_at: iso(expiresAt) },
      });
      copy = { baseUrl, token, expiresAt };
    }
    await tx.mail({
      workspaceId: doc.workspace_id,
      documentId: doc.id,
      signingRequestId: s.id,
      to: { email: s.email, name: s.name },
      locale: doc.locale as Locale,
      template: 'completed',
      vars: { documentTitle: doc.title, signerName: s.name, ...(copy ? { copy } : {}) },
    });
  }
}

export type CopyView = {
  /** `expired`: the link was real but its time is over; the page says whom to ask. */
  state: 'open' | 'expired';
  copy: CopyRow;
  document: DocumentRow;
  workspaceName: string;
  /** The sending workspace's logo and colour, shown on the page. */
  brand: Brand | null;
};

const notValid = () => apiError('not_found', { message: 'This download link is not valid or has expired.' });

/** What a copy link opens; 404 `not_found` for a token that was never one. */
export async function copyView(deps: Pick<SigningDeps, 'db' | 'clock'>, token: string): Promise<CopyView> {
  const hash = linkTokenHash(token);
  const copy = hash ? await findCopyByTokenHash(deps.db.kysely, hash) : undefined;
  const document = copy && (await findDocument(deps.db.kysely, copy.workspace_id, copy.document_id));
  if (!copy || !document || document.status !== 'completed' || !document.signed_blob) throw notValid();
  const ws = await findWorkspace(deps.db.kysely, copy.workspace_id);
  const state = copy.expires_at <= deps.clock.now() ? 'expired' : 'open';
  return { state, copy, document, workspaceName: ws?.name ?? '', brand: ws ? brandOf(ws) : null };
}

/** The document of a link that still works; 404 `not_found` otherwise. */
async function openCopy(deps: SigningDeps, token: string): Promise<DocumentRow> {
  const v = await copyView(deps, token);
  if (v.state !== 'open') throw notValid();
  return v.document;
}

/** The sealed PDF, byte for byte as stored, and how its download is named. */
export async function copyPdf(deps: SigningDeps, token: string) {
  const d = await openCopy(deps, token);
  return { disposition: attachment(d, 'signed'), pdf: await deps.blobs.get(d.signed_blob!) };
}

/** The audit certificate, as `GET /v1/documents/{id}/audit-trail` serves it to the workspace. */
export async function copyAuditCertificate(deps: SigningDeps, token: string) {
  const d = await openCopy(deps, token);
  const c = await auditCertificate(deps, d.workspace_id, d.id);
  return { disposition: attachment(d, 'audit'), pdf: c.pdf };
}
