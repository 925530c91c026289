// The sender's actions after creation: withdraw a signing request or a document, remind a signer (API or dashboard).
import { recordAudit, type AuditRow } from '../audit/audit-log.repo.js';
import type { AuthContext } from '../http/request-context.js';
import { apiError } from '../lib/errors.js';
import { newLinkToken } from '../lib/tokens.js';
import { keyActor } from './presenters.js';
import {
  findDocument,
  findRequest,
  moveDocument,
  moveDocumentRequests,
  setSignerToken,
  type DocumentRow,
} from './signing.repo.js';
import { assertSignable, inviteSigner, reread, type SigningDeps } from './signing.service.js';
import { canMoveRequest } from './states.js';
import { transition, type Tx } from './transition.js';

/** The document is withdrawn with every open request: it can never complete. */
async function withdraw(tx: Tx, doc: DocumentRow, actor: string, requestId: string | null) {
  await moveDocument(tx.trx, doc.id, 'withdraw', { closed_at: tx.now, updated_at: tx.now });
  await moveDocumentRequests(tx.trx, doc.id, 'withdraw', { closed_at: tx.now, updated_at: tx.now });
  await tx.audit(doc, { action: 'document.withdrawn', actor, signingRequestId: requestId });
}

const withdrawable = (doc: DocumentRow | undefined): doc is DocumentRow =>
  !!doc && doc.status === 'in_progress' && doc.seal_state === 'none';

/**
 * Who withdraws a document or sends a reminder: an API key (the audit actor `api_key:<id>`), or a person in the
 * dashboard, who names their workspace and their audit actor (`user:<email>`). A person's action is also an
 * operator action: its audit_log row is written in the change's own transaction.
 */
export type Sender = AuthContext | { workspace: { id: string }; actor: string };
const senderActor = (s: Sender) => s.actor ?? keyActor(s as AuthContext);
const operatorAudit = async (tx: Tx, s: Sender, row: Omit<AuditRow, 'workspaceId' | 'actor'>) => {
  if (s.actor) await recordAudit(tx.trx, { ...row, workspaceId: s.workspace.id, actor: s.actor }, tx.now);
};

/** The sender withdraws one signing request; its document is withdrawn, since it could never complete. */
export async function withdrawRequest(deps: SigningDeps, auth: AuthContext, id: string) {
  const found = await findRequest(deps.db.kysely, auth.workspace.id, id);
  if (!found) throw apiError('not_found');
  await transition(deps, found.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    if (!withdrawable(doc) || !canMoveRequest('withdraw', r.status)) {
      throw apiError('request_not_signable', {
        message: 'Only an open signing request of an in-progress document can be withdrawn.',
      });
    }
    await withdraw(tx, doc, keyActor(auth), r.id);
  });
  return (await findRequest(deps.db.kysely, auth.workspace.id, id))!;
}

export async function withdrawDocument(deps: SigningDeps, auth: Sender, id: string) {
  const found = await findDocument(deps.db.kysely, auth.workspace.id, id);
  if (!found) throw apiError('not_found');
  await transition(deps, id, async (tx, doc) => {
    if (!withdrawable(doc))
      throw apiError('request_not_signable', { message: 'Only an in-progress document can be withdrawn.' });
    await withdraw(tx, doc, senderActor(auth), null);
    await operatorAudit(tx, auth, { action: 'document.withdrawn', targetId: doc.id, detail: { title: doc.title } });
  });
}

/** The invitation again, with a fresh link (the original cannot be re-sent: only its hash is kept). */
export async function remindRequest(deps: SigningDeps, auth: Sender, id: string) {
  const found = await findRequest(deps.db.kysely, auth.workspace.id, id);
  if (!found) throw apiError('not_found');
  await transition(deps, found.document_id, async (tx, doc) => {
    const r = await reread(tx, found);
    assertSignable(doc, r, tx.now);
    const tk = newLinkToken();
    await setSignerToken(tx.trx, r.id, tk.hash, { reminded_at: tx.now, updated_at: tx.now });
    await tx.audit(doc, { action: 'signing_request.reminded', actor: senderActor(auth), signingRequestId: r.id });
    await inviteSigner(deps, tx, doc, r, tk.token, 'reminder');
    const detail = { document_id: doc.id, to: r.email || r.phone };
    await operatorAudit(tx, auth, { action: 'signing_request.reminded', targetId: r.id, detail });
  });
  return (await findRequest(deps.db.kysely, auth.workspace.id, id))!;
}
