// All SQL for documents and their signing requests. A status changes only through moveRequest/moveDocument: a
// guarded update ("… WHERE status IN (the move's from-states)") so a move happens once however many requests or
// workers race for it; callers check the returned boolean or count.
import type { Kysely } from 'kysely';
import { forUpdate, type Db } from '../db/db.js';
import type { Database, DocumentsTable, SigningRequestsTable } from '../db/schema.js';
import { claimLeases, writeUnderLease, type Lease } from '../jobs/lease.repo.js';
import {
  DOCUMENT_MOVES,
  OPEN_REQUEST_STATUSES,
  REQUEST_MOVES,
  SEAL_MOVES,
  type DocumentMove,
  type DocumentStatus,
  type RequestMove,
  type RequestStatus,
  type SealState,
} from './states.js';

export type DocumentRow = Omit<DocumentsTable, 'status' | 'seal_state'> & {
  status: DocumentStatus;
  seal_state: SealState;
};
export type RequestRow = Omit<SigningRequestsTable, 'status'> & { status: RequestStatus };

type Trx = Kysely<Database>;
const asDocument = (r: DocumentsTable | undefined) => r as DocumentRow | undefined;
const asRequest = (r: SigningRequestsTable | undefined) => r as RequestRow | undefined;

export async function insertDocument(trx: Trx, doc: DocumentRow, requests: RequestRow[]): Promise<void> {
  await trx.insertInto('documents').values(doc).execute();
  await insertRequests(trx, requests);
}

/** A template document's requests are written when its instance is confirmed, not with the document. */
export async function insertRequests(trx: Trx, requests: RequestRow[]): Promise<void> {
  if (requests.length) await trx.insertInto('signing_requests').values(requests).execute();
}

/** Locks the document row for the rest of the transaction (PostgreSQL); every state change takes it first. */
export const lockDocument = async (db: Db, trx: Trx, id: string) =>
  asDocument(await forUpdate(db, trx.selectFrom('documents').selectAll().where('id', '=', id)).executeTakeFirst());

export const findDocument = async (db: Trx, workspaceId: string, id: string) =>
  asDocument(
    await db
      .selectFrom('documents')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
  );

export const findDocumentById = async (db: Trx, id: string) =>
  asDocument(await db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst());

export const listRequests = async (db: Trx, documentId: string) =>
  (await db
    .selectFrom('signing_requests')
    .selectAll()
    .where('document_id', '=', documentId)
    .orderBy('slot')
    .execute()) as RequestRow[];

export const findRequest = async (db: Trx, workspaceId: string, id: string) =>
  asRequest(
    await db
      .selectFrom('signing_requests')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
  );

export const findRequestById = async (db: Trx, id: string) =>
  asRequest(await db.selectFrom('signing_requests').selectAll().where('id', '=', id).executeTakeFirst());

export const findRequestByTokenHash = async (db: Trx, tokenHash: string) =>
  asRequest(await db.selectFrom('signing_requests').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst());

type RequestPatch = Partial<Omit<RequestRow, 'status' | 'id'>>;
type DocumentPatch = Partial<Omit<DocumentRow, 'status' | 'id'>>;

// The one guarded update behind every move: rows matching `where` that are in one of `from` take status `to`.
async function guardedMove(
  trx: Trx,
  table: 'signing_requests' | 'documents',
  where: { column: 'id' | 'document_id'; value: string },
  { from, to }: { from: readonly string[]; to: string },
  patch: object,
): Promise<number> {
  const r = await trx
    .updateTable(table)
    .set({ ...patch, status: to } as never)
    .where(where.column, '=', where.value)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Makes `move` on one request; false when it was not in one of the move's from-states (someone else won). */
export const moveRequest = async (trx: Trx, id: string, move: RequestMove, patch: RequestPatch): Promise<boolean> =>
  (await guardedMove(trx, 'signing_requests', { column: 'id', value: id }, REQUEST_MOVES[move], patch)) > 0;

/** Makes `move` on every request of a document that can make it; returns how many did. */
export const moveDocumentRequests = (
  trx: Trx,
  documentId: string,
  move: RequestMove,
  patch: RequestPatch,
): Promise<number> =>
  guardedMove(trx, 'signing_requests', { column: 'document_id', value: documentId }, REQUEST_MOVES[move], patch);

/** Makes `move` on a document; false when it was not in one of the move's from-states. */
export const moveDocument = async (trx: Trx, id: string, move: DocumentMove, patch: DocumentPatch): Promise<boolean> =>
  (await guardedMove(trx, 'documents', { column: 'id', value: id }, DOCUMENT_MOVES[move], patch)) > 0;

/** A fresh signer link replaces the old one (only its hash is kept, so the old link stops working). */
export async function setSignerToken(trx: Trx, id: string, tokenHash: string, patch: RequestPatch = {}): Promise<void> {
  await trx
    .updateTable('signing_requests')
    .set({ ...patch, token_hash: tokenHash })
    .where('id', '=', id)
    .execute();
}

/**
 * The document waits for the sealing job (none → pending, once): every signer signed (`finalRequestId`: the last
 * signature), or a generated file with no signers was confirmed (null).
 */
export async function markSealPending(trx: Trx, id: string, finalRequestId: string | null, now: number): Promise<void> {
  const { from, to } = SEAL_MOVES.queue;
  await trx
    .updateTable('documents')
    .set({ seal_state: to, ...(finalRequestId !== null ? { final_request_id: finalRequestId } : {}), updated_at: now })
    .where('id', '=', id)
    .where('seal_state', 'in', [...from])
    .execute();
}

export async function countDocumentsSince(db: Trx, workspaceId: string, since: number): Promise<number> {
  const r = await db
    .selectFrom('documents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Open requests whose expiry has passed, oldest first. */
export const dueExpiries = (db: Trx, now: number, limit: number) =>
  db
    .selectFrom('signing_requests')
    .select(['id', 'document_id'])
    .where('status', 'in', [...OPEN_REQUEST_STATUSES])
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();

/** How documents hold the sealing job's lease: due once every signer signed; each claim counts an attempt. */
export const SEAL_LEASE: Lease<'documents'> = {
  table: 'documents',
  holder: 'seal_claimed_by',
  until: 'seal_claim_expires_at',
  order: 'updated_at',
  due: (eb) => eb('seal_state', '=', 'pending'),
  onClaim: (eb) => ({ seal_attempts: eb('seal_attempts', '+', 1) }),
};

/** Claims documents waiting to be sealed, or whose sealer's lease lapsed; returns their ids. */
export const claimSealJobs = async (
  db: Db,
  o: { now: number; workerId: string; leaseMs: number; limit: number },
): Promise<string[]> => (await claimLeases(db, SEAL_LEASE, o)).map((d) => d.id);

/** The sealed file, while this worker still holds the seal claim and the document is still waiting for it. */
export const completeSealed = (trx: Trx, id: string, workerId: string, patch: DocumentPatch): Promise<boolean> =>
  writeUnderLease(
    trx,
    SEAL_LEASE,
    id,
    workerId,
    { ...patch, seal_state: SEAL_MOVES.complete.to, status: DOCUMENT_MOVES.complete.to },
    { release: false, where: { seal_state: SEAL_MOVES.complete.from, status: DOCUMENT_MOVES.complete.from } },
  );

/** A failed seal: the error, and a lease that now lapses at the retry time, so any worker retries then. */
export const recordSealFailure = (
  db: Db,
  id: string,
  workerId: string,
  error: string,
  retryAt: number,
): Promise<boolean> =>
  writeUnderLease(
    db.kysely,
    SEAL_LEASE,
    id,
    workerId,
    { seal_last_error: error, seal_claim_expires_at: retryAt },
    { release: false },
  );

/** Hands an unstarted seal back (the worker is stopping), so another worker need not wait for the lease to lapse. */
export const releaseSealClaim = (db: Db, id: string, workerId: string): Promise<boolean> =>
  writeUnderLease(db.kysely, SEAL_LEASE, id, workerId, {}, { release: true });

/** Documents of a workspace whose seal has failed at least once and is not done: what an overview should flag. */
export const failingSeals = (db: Trx, workspaceId: string, limit: number) =>
  db
    .selectFrom('documents')
    .select(['id', 'title', 'seal_attempts', 'seal_last_error', 'updated_at'])
    .where('workspace_id', '=', workspaceId)
    .where('seal_state', '=', 'pending')
    .where('seal_attempts', '>', 0)
    .where('seal_last_error', 'is not', null)
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();

/** The template a document was made from and its instance (staged, confirmed or discarded); null for others. */
export async function documentTemplateOf(db: Trx, workspaceId: string, documentId: string) {
  const r = await db
    .selectFrom('template_instances')
    .leftJoin('templates', 'templates.id', 'template_instances.template_id')
    .select([
      'template_instances.id as instance_id',
      'template_instances.status',
      'template_instances.kind',
      'template_instances.template_id',
      'template_instances.template_version',
      'template_instances.staged_at',
      'template_instances.review_expires_at',
      'template_instances.confirmed_at',
      'template_instances.discarded_at',
      'template_instances.discard_reason',
      'templates.name as template_name',
    ])
    .where('template_instances.document_id', '=', documentId)
    .where('template_instances.workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return r ?? null;
}
