// All SQL for the mail outbox: queueing rendered messages, lease claims of due rows, recording outcomes under the
// claim, and the operator's reads.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Db } from '../db/db.js';
import type { Database, MailOutboxTable } from '../db/schema.js';
import { claimLeases, writeUnderLease, type Lease } from '../jobs/lease.repo.js';
import { noLiveDocument, type PruneTarget } from '../jobs/prune.repo.js';

export type MailStatus = 'queued' | 'sent' | 'failed' | 'logged';
export type MailRow = Selectable<MailOutboxTable>;

/** How outbox rows hold leases: due while queued and past next_attempt_at; an outcome is guarded by the attempts. */
export const MAIL_LEASE: Lease<'mail_outbox'> = {
  table: 'mail_outbox',
  holder: 'claimed_by',
  until: 'claim_expires_at',
  attempts: 'attempts',
  order: 'next_attempt_at',
  due: (eb, now) => eb.and([eb('status', '=', 'queued'), eb('next_attempt_at', '<=', now)]),
};

/**
 * The sender details of a workspace: its name (the From display name), default Reply-To and brand (colour, logo).
 * The whole row, so a schema without migration 022's columns still answers.
 */
export const mailSenderOf = (db: Kysely<Database>, workspaceId: string) =>
  db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();

/** A workspace's logo now: its blob key and media type (null: none, or no such column yet). */
export async function mailLogoOf(
  db: Kysely<Database>,
  workspaceId: string,
): Promise<{ blob: string; type: string } | null> {
  const ws = await db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
  return ws?.logo_blob && ws.logo_type ? { blob: ws.logo_blob, type: ws.logo_type } : null;
}

export async function insertMail(db: Kysely<Database>, row: Insertable<MailOutboxTable>): Promise<void> {
  await db.insertInto('mail_outbox').values(row).execute();
}

export const claimMail = (
  db: Db,
  o: { now: number; workerId: string; leaseMs: number; limit: number },
): Promise<MailRow[]> => claimLeases(db, MAIL_LEASE, o);

/** Applies an outcome (and ends the claim) only while `workerId` holds the claim this row was worked under. */
export const recordMail = (db: Db, row: MailRow, workerId: string, set: Partial<MailRow>): Promise<boolean> =>
  writeUnderLease(db.kysely, MAIL_LEASE, row.id, workerId, set, { release: true, attempts: row.attempts });

/** Newest first (limit 50 by default, at most 500). `to` matches the address case-insensitively. */
export async function findOutbox(
  db: Db,
  opts: {
    documentId?: string;
    signingRequestId?: string;
    workspaceId?: string;
    to?: string;
    status?: MailStatus;
    limit?: number;
  } = {},
): Promise<MailRow[]> {
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
  let q = db.kysely.selectFrom('mail_outbox').selectAll();
  if (opts.documentId !== undefined) q = q.where('document_id', '=', opts.documentId);
  if (opts.signingRequestId !== undefined) q = q.where('signing_request_id', '=', opts.signingRequestId);
  if (opts.workspaceId !== undefined) q = q.where('workspace_id', '=', opts.workspaceId);
  if (opts.status !== undefined) q = q.where('status', '=', opts.status);
  if (opts.to !== undefined) q = q.where((eb) => eb(eb.fn('lower', ['to_email']), '=', opts.to!.trim().toLowerCase()));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export const findMail = (db: Db, id: string): Promise<MailRow | undefined> =>
  db.kysely.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();

/** Rows sent (or logged) before the cutoff, unless they belong to a live document; unsent rows always stay. */
export const MAIL_OUTBOX_PRUNE: PruneTarget<'mail_outbox'> = {
  table: 'mail_outbox',
  key: ['id'],
  order: 'sent_at',
  expired: (eb, cutoff) =>
    eb.and([
      eb('mail_outbox.status', 'in', ['sent', 'logged']),
      eb('mail_outbox.sent_at', '<', cutoff),
      noLiveDocument(eb, 'mail_outbox.document_id'),
    ]),
};
