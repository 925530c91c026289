// The review lifecycle of a staged instance: confirm (by API or on the review page), discard, and the
// `expire-reviews` job. Guarantees: confirm and discard are guarded moves inside the document's transition, so of
// racing calls exactly one wins and one event is emitted; the loser gets 409 by state, or 410 review_expired once the
// review window closed, whether or not the job has run yet.
import { apiError, ApiError } from '../lib/errors.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { findDocumentById, moveDocument } from '../signing/signing.repo.js';
import { invalid } from '../signing/signing.service.js';
import { assertVerificationAvailable } from '../signing/verification.service.js';
import { transition, type TransitionDeps, type Tx } from '../signing/transition.js';
import { instanceFor, release, type Reviewer } from './instances.js';
import { keyActor } from '../signing/presenters.js';
import { instanceEventFields, instanceRecipients, presentInstance } from './presenters.js';
import { checkChannels, resolveRecipients } from './recipients.js';
import {
  dueReviewExpiries,
  findInstanceById,
  findTemplateById,
  moveInstance,
  type InstanceRow,
} from './templates.repo.js';
import type { RecipientIn } from './instances.schemas.js';
import { versionOf, type TemplatesDeps } from './templates.service.js';

/** Why a confirm or discard cannot proceed, or nothing when the instance is staged and its window still open. */
export function stateError(inst: InstanceRow, now: number): ApiError | null {
  if (inst.status === 'confirmed') return apiError(inst.staged_at === null ? 'not_staged' : 'already_confirmed');
  if (inst.status === 'discarded')
    return inst.discard_reason === 'expired' ? apiError('review_expired') : apiError('discarded');
  if (inst.review_expires_at !== null && inst.review_expires_at <= now) return apiError('review_expired');
  return null;
}

/** The instance re-read with its document locked: the one the move will see. */
async function lockedStaged(tx: Tx, id: string): Promise<InstanceRow> {
  const cur = (await findInstanceById(tx.trx, id))!;
  const err = stateError(cur, tx.now);
  if (err) throw err;
  return cur;
}

const findTemplateAny = async (deps: TemplatesDeps, inst: InstanceRow) =>
  (await findTemplateById(deps.db.kysely, inst.template_id))!;

/**
 * Confirm: the staged file is checked once more in a worker thread (a file that cannot be rendered is 502
 * render_failed and nothing is sent), then, in the document's transaction, the guarded move, the invitations (or the
 * seal) and `template_instance.confirmed`. Replacement recipients are validated exactly as at instantiate (plan,
 * recipients, and verification's migration gate).
 */
export async function confirmInstance(
  deps: TemplatesDeps,
  who: Reviewer,
  id: string | undefined,
  replacement?: readonly RecipientIn[],
) {
  const found = await instanceFor(deps, who, id);
  const early = stateError(found, deps.clock.now());
  if (early) throw early;
  let recipients = instanceRecipients(found);
  if (replacement !== undefined) {
    if (found.kind === 'generate') throw invalid('recipients', 'A generated file has no recipients.');
    if ('auth' in who) checkChannels(who.auth, replacement);
    const tpl = await findTemplateAny(deps, found);
    recipients = resolveRecipients(await versionOf(deps, tpl, found.template_version), replacement, { confirm: true });
    // As at instantiate: on a schema before migration 011 a verified signer cannot be written (503, nothing sent).
    if (recipients.some((r) => r.verification)) await assertVerificationAvailable(deps.db);
  }
  const doc0 = await findDocumentById(deps.db.kysely, found.document_id);
  try {
    await deps.pdf.inspect(await deps.blobs.get(doc0!.prepared_blob));
  } catch {
    throw apiError('render_failed', { message: 'The staged PDF could not be rendered; nothing was sent.' });
  }
  const auth = 'auth' in who ? who.auth : null;
  const confirmed = await transition(deps, found.document_id, async (tx, doc) => {
    const cur = await lockedStaged(tx, found.id);
    if (doc!.expires_at <= tx.now)
      throw invalid('expires_at', 'The expiry given at instantiate has passed; instantiate again.');
    if (!(await moveDocument(tx.trx, doc!.id, 'send', { updated_at: tx.now }))) throw apiError('not_staged');
    const next = await release(deps, tx, doc!, cur, recipients, auth);
    const { status: _s, id: _i, ...patch } = next;
    if (!(await moveInstance(tx.trx, cur.id, 'confirm', patch)))
      throw stateError(cur, tx.now) ?? apiError('not_staged');
    return next;
  });
  return presentInstance(confirmed);
}

/** Discard by hand: `template_instance.discarded` with reason `discarded`; the draft document is discarded too. */
export async function discardInstance(deps: TemplatesDeps, who: Reviewer, id?: string) {
  const found = await instanceFor(deps, who, id);
  const early = stateError(found, deps.clock.now());
  if (early) throw early;
  const actor = 'auth' in who ? keyActor(who.auth) : 'review_page';
  const out = await transition(deps, found.document_id, async (tx) => {
    const cur = await lockedStaged(tx, found.id);
    return discard(tx, cur, 'discarded', actor);
  });
  return presentInstance(out!);
}

async function discard(tx: Tx, cur: InstanceRow, reason: 'discarded' | 'expired', actor: string) {
  const patch = { discarded_at: tx.now, discard_reason: reason, updated_at: tx.now };
  if (!(await moveInstance(tx.trx, cur.id, reason === 'expired' ? 'expire' : 'discard', patch))) return null;
  const doc = { id: cur.document_id, workspace_id: cur.workspace_id };
  await moveDocument(tx.trx, cur.document_id, 'discard', { closed_at: tx.now, updated_at: tx.now });
  await tx.audit(doc, { action: 'template_instance.discarded', actor, detail: { instance_id: cur.id, reason } });
  await tx.emit('template_instance.discarded', cur.workspace_id, { ...instanceEventFields(cur), reason });
  return { ...cur, ...patch, status: 'discarded' as const };
}

/**
 * The `expire-reviews` job: every staged instance past its review window is discarded with reason `expired` (one
 * event each). A confirm or discard arriving first already answers 410 (stateError), so the job only tidies up.
 */
export function expireReviewsJob(deps: TransitionDeps): ScheduledJob {
  return {
    everyMs: 3600_000,
    async run(): Promise<Record<string, unknown>> {
      let expired = 0;
      for (;;) {
        const due = await dueReviewExpiries(deps.db.kysely, deps.clock.now(), 100);
        if (due.length === 0) break;
        for (const d of due) {
          const done = await transition(deps, d.document_id, async (tx) => {
            const cur = await findInstanceById(tx.trx, d.id);
            if (!cur || cur.status !== 'staged' || (cur.review_expires_at ?? Infinity) > tx.now) return false;
            return (await discard(tx, cur, 'expired', 'system')) !== null;
          });
          if (done) expired++;
        }
        if (due.length < 100) break;
      }
      return { expired };
    },
  };
}
