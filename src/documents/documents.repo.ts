// SQL for documents and their signing requests. State changes are guarded updates ("… WHERE status IN (…)") so a
// transition happens once however many requests or workers race for it; callers check the returned boolean.
import type { Kysely } from 'kysely';
import { forUpdate, skipLocked, type Db } from '../db/db.js';
import type { Database, DocumentsTable, SigningRequestsTable } from '../db/schema.js';

export type DocumentRow = DocumentsTable;
export type RequestRow = SigningRequestsTable;

export const OPEN_REQUEST_STATES = ['pending', 'viewed'] as const;

export async function insertDocument(trx: Kysely<Database>, doc: DocumentRow, requests: RequestRow[]): Promise<void> {
  await trx.insertInto('documents').values(doc).execute();
  await trx.insertInto('signing_requests').values(requests).execute();
}

/** Locks the document row for the rest of the transaction (PostgreSQL); every state change takes it first. */
export const lockDocument = (db: Db, trx: Kysely<Database>, id: string) =>
  forUpdate(db, trx.selectFrom('documents').selectAll().where('id', '=', id)).executeTakeFirst();

export const findDocument = (db: Kysely<Database>, workspaceId: string, id: string) =>
  db.selectFrom('documents').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();

export const findDocumentById = (db: Kysely<Database>, id: string) =>
  db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();

export const listRequests = (db: Kysely<Database>, documentId: string) =>
  db.selectFrom('signing_requests').selectAll().where('document_id', '=', documentId).orderBy('slot').execute();

export const findRequest = (db: Kysely<Database>, workspaceId: string, id: string) =>
  db.selectFrom('signing_requests').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();

export const findRequestById = (db: Kysely<Database>, id: string) =>
  db.selectFrom('signing_requests').selectAll().where('id', '=', id).executeTakeFirst();

export const findRequestByTokenHash = (db: Kysely<Database>, tokenHash: string) =>
  db.selectFrom('signing_requests').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();

/** Moves a request from one of `from` to a new state; false when it was not in one of them (someone else won). */
export async function transitionRequest(
  trx: Kysely<Database>,
  id: string,
  from: readonly string[],
  patch: Partial<RequestRow> & { status?: string },
): Promise<boolean> {
  const r = await trx.updateTable('signing_requests').set(patch).where('id', '=', id).where('status', 'in', [...from]).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function transitionDocument(
  trx: Kysely<Database>,
  id: string,
  from: readonly string[],
  patch: Partial<DocumentRow>,
): Promise<boolean> {
  const r = await trx.updateTable('documents').set(patch).where('id', '=', id).where('status', 'in', [...from]).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Closes every still-open request of a document (pending, viewed or queued); returns how many. */
export async function closeOpenRequests(trx: Kysely<Database>, documentId: string, status: string, now: number): Promise<number> {
  const r = await trx
    .updateTable('signing_requests')
    .set({ status, closed_at: now, updated_at: now })
    .where('document_id', '=', documentId)
    .where('status', 'in', ['pending', 'viewed', 'queued'])
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function countDocumentsSince(db: Kysely<Database>, workspaceId: string, since: number): Promise<number> {
  const r = await db
    .selectFrom('documents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Open requests whose expiry has passed, oldest first. */
export const dueExpiries = (db: Kysely<Database>, now: number, limit: number) =>
  db
    .selectFrom('signing_requests')
    .select(['id', 'document_id'])
    .where('status', 'in', [...OPEN_REQUEST_STATES])
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();

/** Claims documents waiting to be sealed (or whose sealer's lease lapsed); same pattern as webhook deliveries. */
export async function claimSealJobs(db: Db, opts: { now: number; workerId: string; leaseMs: number; limit: number }): Promise<string[]> {
  const due = skipLocked(
    db,
    db.kysely
      .selectFrom('documents')
      .select('id')
      .where('seal_state', '=', 'pending')
      .where((eb) => eb.or([eb('seal_claimed_by', 'is', null), eb('seal_claim_expires_at', '<=', opts.now)]))
      .orderBy('updated_at')
      .limit(opts.limit),
  );
  const rows = await db.kysely
    .updateTable('documents')
    .set((eb) => ({
      seal_claimed_by: opts.workerId,
      seal_claim_expires_at: opts.now + opts.leaseMs,
      seal_attempts: eb('seal_attempts', '+', 1),
    }))
    .where('id', 'in', due)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
