// The SQL of automatic reminders and expiry warnings. Each send is claimed on its signer row by one guarded update
// (`… WHERE` the value the claimer read), so of several workers racing for the same reminder exactly one changes
// the row and sends; the others change nothing.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EXPIRY_WARNING_MS } from '../limits.js';
import { OPEN_REQUEST_STATUSES } from './states.js';

type Trx = Kysely<Database>;

/** Open requests whose next reminder is due, in id order after `afterId` (a pass never sees a row twice). */
export const dueReminders = (db: Trx, now: number, afterId: string, limit: number) =>
  db
    .selectFrom('signing_requests')
    .select(['id', 'document_id'])
    .where('next_reminder_at', '<=', now)
    .where('status', 'in', [...OPEN_REQUEST_STATUSES])
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();

/**
 * Open requests inside the warning window (expiry within EXPIRY_WARNING_MS, not yet passed) not yet warned, whose
 * signer was invited before the window opened (a later invitation already named the near expiry).
 */
export const dueWarnings = (db: Trx, now: number, afterId: string, limit: number) =>
  db
    .selectFrom('signing_requests')
    .select(['id', 'document_id'])
    .where('status', 'in', [...OPEN_REQUEST_STATUSES])
    .where('expiry_warned_at', 'is', null)
    .where('expires_at', '>', now)
    .where('expires_at', '<=', now + EXPIRY_WARNING_MS)
    .where(sql<boolean>`released_at <= expires_at - ${EXPIRY_WARNING_MS}`)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();

/**
 * Takes reminder number `sent + 1` of a signer whose next reminder was `due`: the new due time (null: none), the
 * count, and the fresh link's hash, in one update guarded by the values read. False: another worker took it.
 */
export async function claimReminder(
  trx: Trx,
  id: string,
  read: { due: number; sent: number | null },
  write: { next: number | null; tokenHash: string; now: number },
): Promise<boolean> {
  let q = trx
    .updateTable('signing_requests')
    .set({
      next_reminder_at: write.next,
      reminders_sent: (read.sent ?? 0) + 1,
      token_hash: write.tokenHash,
      reminded_at: write.now,
      updated_at: write.now,
    })
    .where('id', '=', id)
    .where('next_reminder_at', '=', read.due)
    .where('status', 'in', [...OPEN_REQUEST_STATUSES]);
  q = read.sent === null ? q.where('reminders_sent', 'is', null) : q.where('reminders_sent', '=', read.sent);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** A signer who can no longer be reminded (their document closed) leaves the due list. */
export async function dropReminder(trx: Trx, id: string, due: number): Promise<void> {
  await trx
    .updateTable('signing_requests')
    .set({ next_reminder_at: null })
    .where('id', '=', id)
    .where('next_reminder_at', '=', due)
    .execute();
}

/** Takes a signer's one expiry warning (and the fresh link's hash); false when it was already taken. */
export async function claimWarning(trx: Trx, id: string, tokenHash: string, now: number): Promise<boolean> {
  const r = await trx
    .updateTable('signing_requests')
    .set({ expiry_warned_at: now, token_hash: tokenHash, updated_at: now })
    .where('id', '=', id)
    .where('expiry_warned_at', 'is', null)
    .where('status', 'in', [...OPEN_REQUEST_STATUSES])
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
