// The spec's hourly expiry (`expire-requests`). Guarantees: every pending or viewed request past its expires_at
// becomes `expired` and emits `signing_request.expired` once, with expired_at equal to that expires_at; its queued
// followers expire silently; the document becomes `expired` and never completes. Safe with several workers: each
// request's guarded move succeeds for exactly one of them.
import { iso } from '../lib/clock.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { eventSigner } from './presenters.js';
import { dueExpiries, findRequestById, moveDocument, moveDocumentRequests, moveRequest } from './signing.repo.js';
import { transition, type TransitionDeps } from './transition.js';

export async function expireDue(deps: TransitionDeps, batch = 200): Promise<{ expired: number }> {
  let expired = 0;
  for (;;) {
    const due = await dueExpiries(deps.db.kysely, deps.clock.now(), batch);
    if (due.length === 0) break;
    let progressed = 0;
    for (const item of due) {
      const done = await transition(deps, item.document_id, async (tx, doc) => {
        const r = await findRequestById(tx.trx, item.id);
        if (!doc || !r || r.expires_at > tx.now) return false;
        if (!(await moveRequest(tx.trx, r.id, 'expire', { closed_at: tx.now, updated_at: tx.now }))) return false;
        const expiredAt = iso(r.expires_at);
        await tx.audit(doc, {
          action: 'signing_request.expired',
          actor: 'system',
          signingRequestId: r.id,
          detail: { expired_at: expiredAt },
        });
        await tx.emit('signing_request.expired', doc.workspace_id, {
          signing_request_id: r.id,
          document_id: doc.id,
          signer: eventSigner(r),
          expired_at: expiredAt,
        });
        await moveDocumentRequests(tx.trx, doc.id, 'expire_queued', { closed_at: tx.now, updated_at: tx.now });
        if (await moveDocument(tx.trx, doc.id, 'expire', { closed_at: tx.now, updated_at: tx.now })) {
          await tx.audit(doc, { action: 'document.expired', actor: 'system' });
        }
        return true;
      });
      if (done) {
        expired++;
        progressed++;
      }
    }
    if (progressed === 0) break;
  }
  return { expired };
}

export const expireRequestsJob = (deps: TransitionDeps): ScheduledJob => ({
  everyMs: 3600_000,
  run: () => expireDue(deps),
});
