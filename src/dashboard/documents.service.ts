// Documents in the dashboard: the list (status filter, search, pages), a document with its signers, audit trail and
// template, the two downloads, withdraw / remind, and purge ("Delete permanently"). Everything is scoped to the viewer's workspace (another
// workspace's id is "not found"); members may look, owners and admins act. The reads and state changes are the
// API's own (signing/documents.service.ts, sender.service.ts), so the dashboard cannot drift from them; only the
// audit actor differs: `user:<email>` instead of `api_key:<id>`.
import { ApiError, apiError } from '../lib/errors.js';
import { iso } from '../lib/clock.js';
import { auditCertificate, auditTrail, getDocument, signedPdf } from '../signing/documents.service.js';
import { substringIndex, substringIndexMigration, type Db } from '../db/db.js';
import { migrationApplied } from '../db/migrate.js';
import { documentTemplateOf, findDocument, findRequest } from '../signing/signing.repo.js';
import { listWorkspaceDocuments, type DocumentListRow } from '../signing/document-list.repo.js';
import { remindRequest, withdrawDocument } from '../signing/sender.service.js';
import { purgeDocument } from '../signing/purge.js';
import { DOCUMENT_STATUSES, isEndedDocument, isOpenRequest, type DocumentStatus } from '../signing/states.js';
import { canManage, requireManager, type DashboardDeps } from './dashboard.service.js';
import { actorOf, type Viewer } from './people.service.js';
import { findHook } from '../webhooks/hooks.repo.js';
import { presentHook } from '../webhooks/presenters.js';

/** The dashboard is registered with the signing deps (app.ts). */
export type DocumentsDeps = DashboardDeps;

export const DOCUMENTS_PAGE_SIZE = 25;

// The text index's migration is asked for once per database until it has run (a server may start on an older schema).
const textIndexReady = new WeakSet<Db>();
async function textIndexOf(db: Db) {
  if (!textIndexReady.has(db)) {
    if (!(await migrationApplied(db, substringIndexMigration(db)))) return null;
    textIndexReady.add(db);
  }
  return substringIndex(db);
}
const MAX_SEARCH = 200;

/** Which badge colour (dashboard.css) each status takes; its words are the view's (words.ts `statusText`). */
const TONE: Record<string, 'succeeded' | 'pending' | 'revoked'> = {
  completed: 'succeeded',
  signed: 'succeeded',
  draft: 'pending',
  in_progress: 'pending',
  queued: 'pending',
  pending: 'pending',
  viewed: 'pending',
};
export const statusBadge = (status: string) => ({ status, tone: TONE[status] ?? 'revoked' });

const CURSOR = /^([0-9]{1,15})\.([A-Za-z0-9_]{1,64})$/;

/**
 * One page of the workspace's documents, newest first. A filter that names no status, or a cursor that is not one,
 * is treated as none rather than failing the page; the search is trimmed and cut to 200 characters.
 */
export async function documentList(
  deps: DashboardDeps,
  v: Viewer,
  q: { status?: string; q?: string; before?: string },
) {
  const status = (DOCUMENT_STATUSES as readonly string[]).includes(q.status ?? '')
    ? (q.status as DocumentStatus)
    : undefined;
  // A repeated parameter arrives as an array: only a single value is a search.
  const search = (typeof q.q === 'string' ? q.q : '').trim().slice(0, MAX_SEARCH);
  const m = typeof q.before === 'string' ? CURSOR.exec(q.before) : null;
  const rows = await listWorkspaceDocuments(deps.db.kysely, {
    workspaceId: v.workspace.id,
    status,
    search: search || undefined,
    before: m ? { createdAt: Number(m[1]), id: m[2]! } : undefined,
    limit: DOCUMENTS_PAGE_SIZE + 1,
    textIndex: await textIndexOf(deps.db),
  });
  const page = rows.slice(0, DOCUMENTS_PAGE_SIZE);
  const last = page.at(-1);
  const next = rows.length > DOCUMENTS_PAGE_SIZE && last ? `${last.created_at}.${last.id}` : null;
  const params = (extra: Record<string, string>) =>
    new URLSearchParams({ ...(status ? { status } : {}), ...(search ? { q: search } : {}), ...extra }).toString();
  return {
    documents: page.map(listItem),
    status: status ?? '',
    search,
    statuses: DOCUMENT_STATUSES,
    filtered: Boolean(status || search),
    paged: Boolean(m),
    nextHref: next ? `?${params({ before: next })}` : null,
    firstHref: `?${params({})}`,
  };
}

const listItem = (d: DocumentListRow) => ({
  id: d.id,
  title: d.title,
  badge: statusBadge(d.status),
  created_at: iso(d.created_at),
  completed_at: d.completed_at === null ? null : iso(d.completed_at),
  template: d.template_id ? { name: d.template_name ?? d.template_id, version: d.template_version } : null,
  staged: d.status === 'draft' && d.instance_status === 'staged',
  signers: d.signers.map((s) => ({ who: s.email || s.phone || s.name, status: statusBadge(s.status) })),
  signed: d.signers.filter((s) => s.status === 'signed').length,
});

/** A document of the viewer's workspace as its page shows it; 404 for anything else. */
export async function documentPage(deps: DocumentsDeps, v: Viewer, id: string) {
  const doc = await getDocument(deps, v.workspace.id, id);
  const row = (await findDocument(deps.db.kysely, v.workspace.id, id))!;
  const [trail, template, callback] = await Promise.all([
    auditTrail(deps, v.workspace.id, id),
    documentTemplateOf(deps.db.kysely, v.workspace.id, id),
    // The document's own webhook (its `callback_url`), while it is live: the webhooks page lists workspace-wide ones.
    row.callback_hook_id ? findHook(deps.db.kysely, v.workspace.id, row.callback_hook_id) : undefined,
  ]);
  const actionable = doc.status === 'in_progress' && row.seal_state === 'none';
  const manager = canManage(v);
  const byRequest = new Map(doc.signing_requests.map((r) => [r.id, r.signer.email || r.signer.name]));
  const now = deps.clock.now();
  return {
    doc,
    badge: statusBadge(doc.status),
    callback: callback ? presentHook(callback) : null,
    sealing: doc.status === 'in_progress' && row.seal_state === 'pending',
    sealError: row.seal_state === 'pending' ? row.seal_last_error : null,
    canManage: manager,
    canWithdraw: manager && actionable,
    canPurge: manager && isEndedDocument(doc.status),
    signers: doc.signing_requests.map((r) => ({
      ...r,
      who: r.signer.email || r.signer.name,
      badge: statusBadge(r.status),
      // Reminding needs a signer who can still sign now: open, not expired, the document not closed or sealing.
      canRemind: manager && actionable && isOpenRequest(r.status) && Date.parse(r.expires_at) > now,
    })),
    trail: {
      chainValid: trail.chain_valid,
      headHash: trail.head_hash,
      entries: trail.entries.map((e) => {
        const signer = e.signing_request_id ? (byRequest.get(e.signing_request_id) ?? e.signing_request_id) : null;
        return {
          ...e,
          // The signer an entry is about, unless they are its actor already.
          about: signer && e.actor !== `signer:${signer}` ? signer : null,
          detailText: e.detail ? detailText(e.detail) : null,
        };
      }),
    },
    template: template
      ? {
          name: template.template_name ?? template.template_id,
          id: template.template_id,
          version: template.template_version,
          instanceId: template.instance_id,
          instanceStatus: template.status,
          kind: template.kind,
          stagedAt: template.staged_at === null ? null : iso(template.staged_at),
          reviewExpiresAt: template.review_expires_at === null ? null : iso(template.review_expires_at),
          discardReason: template.discard_reason,
        }
      : null,
  };
}

/** An audit entry's detail as `key: value` pairs (strings bare, anything else as JSON). */
const detailText = (detail: object) =>
  Object.entries(detail)
    .map(([k, val]) => `${k}: ${typeof val === 'string' ? val : JSON.stringify(val)}`)
    .join(', ');

/** The sealed PDF; null before completion (the page says so with a 404). */
export async function sealedPdf(deps: DocumentsDeps, v: Viewer, id: string) {
  try {
    return await signedPdf(deps, v.workspace.id, id);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'document_not_completed') return null;
    throw err;
  }
}

/** The audit certificate (a PDF of the audit page and the whole event log), for any document of the workspace. */
export const certificatePdf = (deps: DocumentsDeps, v: Viewer, id: string) =>
  auditCertificate(deps, v.workspace.id, id);

/** The document's id again, or 404 (so a withdraw page is only shown for a document of the workspace). */
export async function withdrawPage(deps: DocumentsDeps, v: Viewer, id: string) {
  requireManager(v);
  return getDocument(deps, v.workspace.id, id);
}

/**
 * true: withdrawn now; false: it could not be (completed, sealing, or already closed). The withdrawal writes its
 * audit_log row (signing/sender.service.ts, `Sender`), as a reminder does.
 */
export async function withdraw(deps: DocumentsDeps, v: Viewer, id: string): Promise<boolean> {
  requireManager(v);
  return refusedAs409(() => withdrawDocument(deps, { workspace: v.workspace, actor: actorOf(v) }, id));
}

/** The document for the purge confirmation page; 404 for another workspace's. */
export async function purgePage(deps: DocumentsDeps, v: Viewer, id: string) {
  requireManager(v);
  return getDocument(deps, v.workspace.id, id);
}

/**
 * true: purged now (or before); false: it has not ended. The API's purge (signing/purge.ts), recorded in the audit
 * log with the person as actor.
 */
export async function purge(deps: DocumentsDeps, v: Viewer, id: string): Promise<boolean> {
  requireManager(v);
  return refusedAs409(() => purgeDocument(deps, { workspaceId: v.workspace.id, id, actor: actorOf(v) }));
}

/** A reminder with a fresh link to one open signer of this document; false when they can no longer sign. */
export async function remind(deps: DocumentsDeps, v: Viewer, documentId: string, requestId: string): Promise<boolean> {
  requireManager(v);
  const r = await findRequest(deps.db.kysely, v.workspace.id, requestId);
  if (!r || r.document_id !== documentId) throw apiError('not_found');
  return refusedAs409(() => remindRequest(deps, { workspace: v.workspace, actor: actorOf(v) }, r.id));
}

/** The API's 409 (not withdrawable, not signable) as false; anything else is thrown. */
async function refusedAs409(fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) return false;
    throw err;
  }
}
