// Every signing write runs through here. Guarantees:
// - One transaction per state change. `transition` locks the document row first, so changes to one document are
//   serial; its moves are guarded (signing.repo.ts), so a losing racer changes nothing.
// - Audit entries, webhook events and e-mails are written in that same transaction: each exists exactly when its
//   state change committed, and is never written twice.
// - After the commit, and only then, the workers that got work are woken (deliveries, mail, SMS, sealing).
import type { Kysely } from 'kysely';
import type { Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import { appendAudit, type AuditInput } from '../documents/audit.repo.js';
import type { Clock } from '../lib/clock.js';
import type { MailQueue, OutgoingMail } from '../mail/outbox.js';
import type { OutgoingSms, SmsQueue } from '../sms/outbox.js';
import type { EventFields, EventName } from '../webhooks/events.js';
import type { Emit } from '../webhooks/outbox.repo.js';
import { lockDocument, type DocumentRow } from './signing.repo.js';

/** Nudges in-process workers after a commit; no-ops where the worker runs in another process. */
export type Wakers = { deliveries(): void; mail(): void; sealing(): void; sms(): void; bulkSends(): void };

export const noWake: Wakers = { deliveries() {}, mail() {}, sealing() {}, sms() {}, bulkSends() {} };

export type TransitionDeps = { db: Db; clock: Clock; emit: Emit; mail: MailQueue; sms: SmsQueue; wake: Wakers };

export type Tx = {
  readonly trx: Kysely<Database>;
  /** The clock's reading when the transaction began: one time for every row it writes. */
  readonly now: number;
  audit(
    doc: Pick<DocumentRow, 'id' | 'workspace_id'>,
    entry: Omit<AuditInput, 'documentId' | 'workspaceId'>,
  ): Promise<void>;
  emit<N extends EventName>(name: N, workspaceId: string, fields: EventFields<N>): Promise<void>;
  mail(msg: OutgoingMail): Promise<void>;
  sms(msg: OutgoingSms): Promise<void>;
  /** The document is ready to seal: wake the sealing job after the commit. */
  sealAfterCommit(): void;
};

/**
 * Runs `fn` in one transaction with the signing effects, then wakes the workers it gave work to. `now`: the time the
 * change happened, when the caller read the clock before slow work (creation processes the PDF first).
 */
export async function inTransaction<T>(
  deps: TransitionDeps,
  fn: (tx: Tx) => Promise<T>,
  now = deps.clock.now(),
): Promise<T> {
  const woken = { deliveries: false, mail: false, sealing: false, sms: false };
  const result = await deps.db.kysely.transaction().execute((trx) =>
    fn({
      trx,
      now,
      audit: async (doc, entry) =>
        void (await appendAudit(trx, { ...entry, documentId: doc.id, workspaceId: doc.workspace_id }, now)),
      async emit(name, workspaceId, fields) {
        await deps.emit(trx, name, workspaceId, fields);
        woken.deliveries = true;
      },
      async mail(msg) {
        await deps.mail.enqueue(trx, msg);
        woken.mail = true;
      },
      async sms(msg) {
        await deps.sms.enqueue(trx, msg);
        woken.sms = true;
      },
      sealAfterCommit: () => void (woken.sealing = true),
    }),
  );
  if (woken.sealing) deps.wake.sealing();
  if (woken.mail) deps.wake.mail();
  if (woken.sms) deps.wake.sms();
  if (woken.deliveries) deps.wake.deliveries();
  return result;
}

/** A state change of one document: `fn` runs with the document row locked (undefined if it does not exist). */
export function transition<T>(
  deps: TransitionDeps,
  documentId: string,
  fn: (tx: Tx, doc: DocumentRow | undefined) => Promise<T>,
): Promise<T> {
  return inTransaction(deps, async (tx) => fn(tx, await lockDocument(deps.db, tx.trx, documentId)));
}
