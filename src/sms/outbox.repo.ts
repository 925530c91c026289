// All SQL for the SMS outbox: queueing rendered messages, lease claims of due rows (jobs/lease.repo.ts), recording
// outcomes under the claim, and the operator's reads.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Db } from '../db/db.js';
import type { Database, SmsOutboxTable } from '../db/schema.js';
import { claimLeases, writeUnderLease, type Lease } from '../jobs/lease.repo.js';
import { noLiveDocument, type PruneTarget } from '../jobs/prune.repo.js';

export type SmsStatus = 'queued' | 'sent' | 'failed' | 'logged';
export const SMS_STATUSES: readonly SmsStatus[] = ['queued', 'sent', 'failed', 'logged'];
export type SmsRow = Selectable<SmsOutboxTable>;

/** How outbox rows hold leases: due while queued and past next_attempt_at; an outcome is guarded by the attempts. */
export const SMS_LEASE: Lease<'sms_outbox'> = {
  table: 'sms_outbox',
  holder: 'claimed_by',
  until: 'claim_expires_at',
  attempts: 'attempts',
  order: 'next_attempt_at',
  due: (eb, now) => eb.and([eb('status', '=', 'queued'), eb('next_attempt_at', '<=', now)]),
};

/** The workspace's display name, which the message names as its sender. */
export async function workspaceNameOf(db: Kysely<Database>, workspaceId: string): Promise<string | undefined> {
  const row = await db.selectFrom('workspaces').select('name').where('id', '=', workspaceId).executeTakeFirst();
  return row?.name;
}

export async function insertSms(db: Kysely<Database>, row: Insertable<SmsOutboxTable>): Promise<void> {
  await db.insertInto('sms_outbox').values(row).execute();
}

export const claimSms = (
  db: Db,
  o: { now: number; workerId: string; leaseMs: number; limit: number },
): Promise<SmsRow[]> => claimLeases(db, SMS_LEASE, o);

/** Applies an outcome (and ends the claim) only while `workerId` holds the claim this row was worked under. */
export const recordSms = (db: Db, row: SmsRow, workerId: string, set: Partial<SmsRow>): Promise<boolean> =>
  writeUnderLease(db.kysely, SMS_LEASE, row.id, workerId, set, { release: true, attempts: row.attempts });

/** Newest first (limit 50 by default, at most 500). */
export async function findSmsOutbox(
  db: Db,
  opts: {
    status?: SmsStatus;
    documentId?: string;
    signingRequestId?: string;
    workspaceId?: string;
    limit?: number;
  } = {},
): Promise<SmsRow[]> {
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
  let q = db.kysely.selectFrom('sms_outbox').selectAll();
  if (opts.status !== undefined) q = q.where('status', '=', opts.status);
  if (opts.documentId !== undefined) q = q.where('document_id', '=', opts.documentId);
  if (opts.signingRequestId !== undefined) q = q.where('signing_request_id', '=', opts.signingRequestId);
  if (opts.workspaceId !== undefined) q = q.where('workspace_id', '=', opts.workspaceId);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export const findSms = (db: Db, id: string): Promise<SmsRow | undefined> =>
  db.kysely.selectFrom('sms_outbox').selectAll().where('id', '=', id).executeTakeFirst();

/** Rows sent (or logged) before the cutoff, unless they belong to a live document; unsent rows always stay. */
export const SMS_OUTBOX_PRUNE: PruneTarget<'sms_outbox'> = {
  table: 'sms_outbox',
  key: ['id'],
  order: 'sent_at',
  expired: (eb, cutoff) =>
    eb.and([
      eb('sms_outbox.status', 'in', ['sent', 'logged']),
      eb('sms_outbox.sent_at', '<', cutoff),
      noLiveDocument(eb, 'sms_outbox.document_id'),
    ]),
};
