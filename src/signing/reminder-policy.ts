// When automatic reminders fall due: pure functions over a document's policy (migration 012). Guarantees: a signer's
// first reminder is `after_days` after they were invited or released (never while queued), each later one a whole
// `every_days` after the previous due time, at most MAX_AUTO_REMINDERS in all, and none in the last
// EXPIRY_WARNING_MS before expiry: the expiry warning is the last nudge (two mails in a day, each with a fresh link
// that retires the other's, would only confuse). Nothing here is written unless the document has a policy, so code
// on a schema without these columns never writes them.
import { EXPIRY_WARNING_MS, MAX_AUTO_REMINDERS } from '../limits.js';
import type { DocumentRow } from './signing.repo.js';

const DAY_MS = 86_400_000;

/** A reminder policy as the API shows it; null: no automatic reminders. */
export type Reminders = { after_days: number; every_days: number } | null;

type PolicyColumns = Partial<Pick<DocumentRow, 'reminder_after_days' | 'reminder_every_days'>>;

/** The document's policy, or null (none set, or a schema without the columns). */
export function policyOf(doc: PolicyColumns): Reminders {
  const after = doc.reminder_after_days;
  const every = doc.reminder_every_days;
  return after != null && every != null ? { after_days: Number(after), every_days: Number(every) } : null;
}

/** The document columns of a policy: written only when there is one. */
export const policyColumns = (p: Reminders): PolicyColumns =>
  p ? { reminder_after_days: p.after_days, reminder_every_days: p.every_days } : {};

/** A due time, or null when it falls in the warning window (or later). */
const beforeWarning = (at: number, expiresAt: number): number | null =>
  at < expiresAt - EXPIRY_WARNING_MS ? at : null;

/** A signer invited or released at `releasedAt`: their first reminder's time, or null. */
export const firstReminderAt = (p: Reminders, releasedAt: number, expiresAt: number): number | null =>
  p ? beforeWarning(releasedAt + p.after_days * DAY_MS, expiresAt) : null;

/**
 * The reminder columns of a signer invited or released now: set only under a policy (so old-schema code paths,
 * where nobody can have one, write nothing new).
 */
export function releaseColumns(doc: PolicyColumns, releasedAt: number, expiresAt: number) {
  const p = policyOf(doc);
  return p ? { next_reminder_at: firstReminderAt(p, releasedAt, expiresAt), reminders_sent: 0 } : {};
}

/**
 * After reminder number `sent` (due at `due`) went out at `now`: the next due time, or null (cap reached, or it
 * would fall in the warning window). A worker that was down for several periods sends one reminder, not a burst:
 * the next is the first period boundary after `now`.
 */
export function nextReminderAt(p: Reminders, due: number, now: number, sent: number, expiresAt: number) {
  if (!p || sent >= MAX_AUTO_REMINDERS) return null;
  const every = p.every_days * DAY_MS;
  const periods = Math.max(1, Math.floor((now - due) / every) + 1);
  return beforeWarning(due + periods * every, expiresAt);
}
