// All SQL of bulk sends. Guarantees: a bulk send and all its rows are written in one transaction; a row leaves
// `pending` once, by a guarded update ("… WHERE status = 'pending'") made together with the send's counter under
// the worker's lease, so two workers can never both record one row, and a worker that lost its lease records
// nothing (the caller's transaction is then rolled back, with the instance it was writing).
import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/db.js';
import type { BulkSendRowsTable, BulkSendsTable, Database } from '../db/schema.js';
import { claimLeases, writeUnderLease, type Lease } from '../jobs/lease.repo.js';

type Trx = Kysely<Database>;
export type BulkSendRow = BulkSendsTable;
export type BulkRowRow = BulkSendRowsTable;

export const BULK_LEASE: Lease<'bulk_sends'> = {
  table: 'bulk_sends',
  holder: 'claimed_by',
  until: 'claim_expires_at',
  due: (eb) => eb('status', 'in', ['queued', 'running']),
  order: 'created_at',
};

/** A row's outcome could not be recorded: another worker holds the send, or recorded the row first. */
export class LostClaim extends Error {
  constructor() {
    super('bulk send: the claim was lost, or the row was recorded by another worker');
  }
}

/** Rows per INSERT: SQLite allows 32,766 bound values, PostgreSQL 65,535; 8 columns a row. */
const INSERT_CHUNK = 500;

/** The send and all its rows, in one transaction. */
export async function insertBulkSend(db: Trx, send: BulkSendRow, rows: BulkRowRow[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('bulk_sends').values(send).execute();
    for (let i = 0; i < rows.length; i += INSERT_CHUNK)
      await trx
        .insertInto('bulk_send_rows')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
  });
}

export const findBulkSend = (db: Trx, workspaceId: string, id: string) =>
  db
    .selectFrom('bulk_sends')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();

/** The workspace's bulk send made by a dashboard form, if that form was sent already. */
export const findBulkSendByFormKey = (db: Trx, workspaceId: string, formKey: string) =>
  db
    .selectFrom('bulk_sends')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('form_key', '=', formKey)
    .executeTakeFirst();

export const findBulkSendById = (db: Trx, id: string) =>
  db.selectFrom('bulk_sends').selectAll().where('id', '=', id).executeTakeFirst();

/** The rows with an outcome, in order. */
export const doneRows = (db: Trx, id: string) =>
  db
    .selectFrom('bulk_send_rows')
    .select(['row', 'status', 'template_instance_id', 'problems'])
    .where('bulk_send_id', '=', id)
    .where('status', '!=', 'pending')
    .orderBy('row')
    .execute();

/** The document of each sent row's instance, by row (the dashboard links a row to its document). */
export const sentRowDocuments = (db: Trx, id: string) =>
  db
    .selectFrom('bulk_send_rows as r')
    .innerJoin('template_instances as i', 'i.id', 'r.template_instance_id')
    .select(['r.row', 'i.document_id'])
    .where('r.bulk_send_id', '=', id)
    .execute();

/** The first row still to send. */
export const nextPendingRow = (db: Trx, id: string) =>
  db
    .selectFrom('bulk_send_rows')
    .selectAll()
    .where('bulk_send_id', '=', id)
    .where('status', '=', 'pending')
    .orderBy('row')
    .limit(1)
    .executeTakeFirst();

export const claimBulkSends = async (
  db: Db,
  o: { now: number; workerId: string; leaseMs: number; limit: number },
): Promise<BulkSendRow[]> => claimLeases(db, BULK_LEASE, o);

export const releaseBulkSend = (db: Db, id: string, workerId: string): Promise<boolean> =>
  writeUnderLease(db.kysely, BULK_LEASE, id, workerId, {}, { release: true });

/** A try of `row` begins: its attempts, counted before the work, while the row is pending; the count after. */
export async function beginRowAttempt(db: Trx, id: string, row: number, now: number): Promise<number | null> {
  const r = await db
    .updateTable('bulk_send_rows')
    .set({ attempts: sql<number>`attempts + 1`, updated_at: now })
    .where('bulk_send_id', '=', id)
    .where('row', '=', row)
    .where('status', '=', 'pending')
    .returning('attempts')
    .executeTakeFirst();
  return r ? r.attempts : null;
}

export type RowOutcome =
  | { status: 'sent'; instanceId: string }
  | { status: 'failed'; problems: readonly { code: string; field?: string; message: string }[] };

/**
 * Records `rows`' outcome inside the caller's transaction, with the send's counter, while `workerId` holds the
 * send; throws LostClaim otherwise (the caller's transaction must then roll back).
 */
export async function recordRows(
  trx: Trx,
  id: string,
  workerId: string,
  rows: readonly number[],
  outcome: RowOutcome,
  now: number,
): Promise<void> {
  if (rows.length === 0) return;
  const r = await trx
    .updateTable('bulk_send_rows')
    .set({
      status: outcome.status,
      template_instance_id: outcome.status === 'sent' ? outcome.instanceId : null,
      problems: outcome.status === 'failed' ? JSON.stringify(outcome.problems) : null,
      updated_at: now,
    })
    .where('bulk_send_id', '=', id)
    .where('row', 'in', [...rows])
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== rows.length) throw new LostClaim();
  const counter = outcome.status === 'sent' ? 'sent' : 'failed';
  const ok = await writeUnderLease(
    trx,
    BULK_LEASE,
    id,
    workerId,
    { [counter]: sql`${sql.ref(counter)} + ${rows.length}`, status: 'running', updated_at: now },
    { release: false, where: { status: ['queued', 'running'] } },
  );
  if (!ok) throw new LostClaim();
}

/** The pending rows' numbers (a run stopped by the cap fails them all at once). */
export const pendingRows = async (db: Trx, id: string): Promise<number[]> =>
  (
    await db
      .selectFrom('bulk_send_rows')
      .select('row')
      .where('bulk_send_id', '=', id)
      .where('status', '=', 'pending')
      .orderBy('row')
      .execute()
  ).map((r) => r.row);

/** The send's end: `completed` (every row has its outcome) or `failed` (stopped early); the claim is let go. */
export const finishBulkSend = (
  db: Trx,
  id: string,
  workerId: string,
  status: 'completed' | 'failed',
  now: number,
): Promise<boolean> =>
  writeUnderLease(
    db,
    BULK_LEASE,
    id,
    workerId,
    { status, completed_at: now, updated_at: now },
    { release: true, where: { status: ['queued', 'running'] } },
  );
