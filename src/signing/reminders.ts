// The clock-driven jobs `send-reminders` and `warn-expiring` (issue 22). Guarantees:
// - a reminder or an expiry warning is sent exactly once across every worker: it is claimed on the signer's row by a
//   guarded update (reminders.repo.ts) inside the document's `transition`, which writes the mail or SMS, the fresh
//   link and the audit entry in the same transaction; a racing worker's update changes nothing and it sends nothing;
// - only signers who still have to act and whose turn has come are reminded or warned (open request, in-progress
//   document, not sealing, not past expiry); queued signers have no due time until released;
// - each signer gets at most MAX_AUTO_REMINDERS automatic reminders (reminder-policy.ts) and one expiry warning;
// - on a schema without migration 012 both jobs do nothing (rolling upgrade).
import type { Db } from '../db/db.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { migrationGate } from '../http/feature-gate.js';
import { newLinkToken } from '../lib/tokens.js';
import { nextReminderAt, policyOf } from './reminder-policy.js';
import { claimReminder, claimWarning, dropReminder, dueReminders, dueWarnings } from './reminders.repo.js';
import { findRequestById } from './signing.repo.js';
import { inviteSigner, signerState, type SigningDeps } from './signing.service.js';
import { transition, type TransitionDeps } from './transition.js';

export type ReminderDeps = TransitionDeps & Pick<SigningDeps, 'config'>;

/** Jobs run every quarter hour: a reminder is at most that late. */
const EVERY_MS = 15 * 60_000;
const BATCH = 200;

/** Whether migration 012 has run (once true, stays true; re-checked until then). */
export const remindersReady = (db: Db): Promise<boolean> => migrationGate(db, '012-reminders').available();

/** Walks every due row once (keyset on id), running `one` on each; returns how many it sent. */
async function eachDue(
  deps: ReminderDeps,
  due: (now: number, afterId: string) => Promise<{ id: string; document_id: string }[]>,
  one: (item: { id: string; document_id: string }) => Promise<boolean>,
): Promise<number> {
  let sent = 0;
  let afterId = '';
  for (;;) {
    const rows = await due(deps.clock.now(), afterId);
    for (const item of rows) if (await one(item)) sent++;
    if (rows.length < BATCH) return sent;
    afterId = rows[rows.length - 1]!.id;
  }
}

export async function sendDueReminders(deps: ReminderDeps): Promise<Record<string, unknown>> {
  if (!(await remindersReady(deps.db))) return { skipped: 'migration 012-reminders not applied' };
  const sent = await eachDue(
    deps,
    (now, afterId) => dueReminders(deps.db.kysely, now, afterId, BATCH),
    (item) =>
      transition(deps, item.document_id, async (tx, doc) => {
        const r = await findRequestById(tx.trx, item.id);
        const due = r?.next_reminder_at ?? null;
        if (!r || due === null || due > tx.now) return false;
        if (signerState(doc, r, tx.now) !== 'open') {
          await dropReminder(tx.trx, r.id, due);
          return false;
        }
        const count = (r.reminders_sent ?? 0) + 1;
        const next = nextReminderAt(policyOf(doc!), due, tx.now, count, r.expires_at);
        const tk = newLinkToken();
        const read = { due, sent: r.reminders_sent ?? null };
        if (!(await claimReminder(tx.trx, r.id, read, { next, tokenHash: tk.hash, now: tx.now }))) return false;
        await tx.audit(doc!, {
          action: 'signing_request.reminded',
          actor: 'system',
          signingRequestId: r.id,
          detail: { automatic: true, reminder: count },
        });
        await inviteSigner(deps, tx, doc!, r, tk.token, 'reminder');
        return true;
      }),
  );
  return { sent };
}

export async function sendExpiryWarnings(deps: ReminderDeps): Promise<Record<string, unknown>> {
  if (!(await remindersReady(deps.db))) return { skipped: 'migration 012-reminders not applied' };
  const warned = await eachDue(
    deps,
    (now, afterId) => dueWarnings(deps.db.kysely, now, afterId, BATCH),
    (item) =>
      transition(deps, item.document_id, async (tx, doc) => {
        const r = await findRequestById(tx.trx, item.id);
        if (!r || r.expiry_warned_at != null || signerState(doc, r, tx.now) !== 'open') return false;
        const tk = newLinkToken();
        if (!(await claimWarning(tx.trx, r.id, tk.hash, tx.now))) return false;
        await tx.audit(doc!, {
          action: 'signing_request.expiry_warned',
          actor: 'system',
          signingRequestId: r.id,
          detail: { expires_at: new Date(r.expires_at).toISOString() },
        });
        await inviteSigner(deps, tx, doc!, r, tk.token, 'expiry_warning');
        return true;
      }),
  );
  return { warned };
}

export const sendRemindersJob = (deps: ReminderDeps): ScheduledJob => ({
  everyMs: EVERY_MS,
  run: () => sendDueReminders(deps),
});

export const warnExpiringJob = (deps: ReminderDeps): ScheduledJob => ({
  everyMs: EVERY_MS,
  run: () => sendExpiryWarnings(deps),
});
