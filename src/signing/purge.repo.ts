// The SQL of purging one ended document (signing/purge.ts): every row that holds its personal data goes, in one
// transaction, children before the rows they reference; what stays is its tombstone. Callers hold the document's
// row lock (PostgreSQL) and have checked that it ended.
import { sql, type Kysely } from 'kysely';
import { forUpdate, indexedBy, skipLocked, type Db } from '../db/db.js';
import { DELIVERY_LEASE } from '../webhooks/deliveries.repo.js';
import type { Database, DocumentTombstonesTable } from '../db/schema.js';
import type { DocumentRow } from './signing.repo.js';
import { ENDED_DOCUMENT_STATUSES } from './states.js';

type Trx = Kysely<Database>;
const DAY_MS = 86_400_000;

export const findTombstone = (db: Trx, workspaceId: string, id: string) =>
  db
    .selectFrom('document_tombstones')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();

/**
 * The blobs only this document's rows name: its files, its signers' images, its QES revisions. A template
 * document's original is its template version's (shared by every document of that version): it stays.
 */
export async function documentBlobs(trx: Trx, doc: DocumentRow): Promise<string[]> {
  const signatures = await trx
    .selectFrom('signing_requests')
    .select('signature_blob')
    .where('document_id', '=', doc.id)
    .where('signature_blob', 'is not', null)
    .execute();
  const ceremonies = await trx
    .selectFrom('qes_ceremonies')
    .select('prepared_blob')
    .where(
      'signing_request_id',
      'in',
      trx.selectFrom('signing_requests').select('id').where('document_id', '=', doc.id),
    )
    .where('prepared_blob', 'is not', null)
    .execute();
  return [
    doc.template_id ? null : doc.original_blob,
    doc.prepared_blob,
    doc.signed_blob,
    doc.qes_blob,
    ...signatures.map((r) => r.signature_blob),
    ...ceremonies.map((r) => r.prepared_blob),
  ].filter((k): k is string => !!k);
}

/** The hash of the last entry of the document's audit chain (null: no entry). */
export const lastAuditHash = async (trx: Trx, documentId: string): Promise<string | null> =>
  (
    await trx
      .selectFrom('audit_events')
      .select('hash')
      .where('document_id', '=', documentId)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst()
  )?.hash ?? null;

/**
 * Deletes every row of the document that can hold personal data (signers, sessions, codes, outboxes, events and
 * their deliveries, the audit chain, its template instance), blanks what other rows kept of it (operator audit
 * details, bulk-send input), retires its callback hook, then the document row itself.
 */
export async function deleteDocumentRows(
  trx: Trx,
  doc: DocumentRow,
  now: number,
  o: { db: Db; deliveryQueue: boolean },
): Promise<void> {
  const documentId = doc.id;
  const eventIds = trx.selectFrom('events').select('id').where('document_id', '=', documentId);
  const deliveryIds = trx.selectFrom('deliveries').select('id').where('event_id', 'in', eventIds);
  const ids = (
    await trx.selectFrom('signing_requests').select('id').where('document_id', '=', documentId).execute()
  ).map((r) => r.id);
  const instance = await trx
    .selectFrom('template_instances')
    .select('id')
    .where('document_id', '=', documentId)
    .executeTakeFirst();
  // A worker's record takes a delivery's queue row, then the delivery; a replay takes its source delivery, then
  // inserts a new one. So: the queue rows first (a record that starts later finds its row gone and writes nothing;
  // taking the deliveries first would deadlock with it), then the deliveries locked. A record or a replay in flight
  // then commits before the deletes below, each a statement of its own, which see its attempt or its new row; before,
  // that row appeared after its delete and failed the next one on a foreign key. (No queue before migration 028.)
  if (o.deliveryQueue) {
    const queue = indexedBy(o.db, 'delivery_queue', DELIVERY_LEASE.indexes.key);
    await sql`DELETE FROM ${queue} WHERE id IN (${deliveryIds})`.execute(trx);
  }
  await forUpdate(o.db, trx.selectFrom('deliveries').select('id').where('event_id', 'in', eventIds)).execute();
  await trx.deleteFrom('delivery_attempts').where('delivery_id', 'in', deliveryIds).execute();
  await trx.deleteFrom('deliveries').where('event_id', 'in', eventIds).execute();
  await trx.deleteFrom('events').where('document_id', '=', documentId).execute();
  await trx.deleteFrom('signer_copies').where('document_id', '=', documentId).execute();
  for (const table of ['mail_outbox', 'sms_outbox'] as const)
    await trx.deleteFrom(table).where('document_id', '=', documentId).execute();
  if (ids.length) {
    for (const table of ['signer_codes', 'qes_ceremonies', 'embed_sessions'] as const)
      await trx.deleteFrom(table).where('signing_request_id', 'in', ids).execute();
  }
  await trx
    .updateTable('audit_log')
    .set({ detail: null })
    .where('target_id', 'in', [documentId, ...ids])
    .execute();
  // A stored API answer (kept 24 h) of the create call repeats its signers: it goes with the document.
  if (doc.created_by_key_id) {
    await trx
      .deleteFrom('idempotency_keys')
      .where('key_id', '=', doc.created_by_key_id)
      .where('response_body', 'like', `%"${documentId}"%`)
      .execute();
  }
  if (instance) {
    await trx
      .updateTable('bulk_send_rows')
      .set({ input: null, problems: null })
      .where('template_instance_id', '=', instance.id)
      .execute();
    await trx.deleteFrom('template_instances').where('id', '=', instance.id).execute();
  }
  await trx.deleteFrom('audit_events').where('document_id', '=', documentId).execute();
  await trx.deleteFrom('signing_requests').where('document_id', '=', documentId).execute();
  await trx.deleteFrom('documents').where('id', '=', documentId).execute();
  await trx
    .updateTable('hooks')
    .set({ deleted_at: now })
    .where('workspace_id', '=', doc.workspace_id)
    .where('document_id', '=', documentId)
    .where('deleted_at', 'is', null)
    .execute();
}

export async function insertTombstone(trx: Trx, row: DocumentTombstonesTable): Promise<void> {
  await trx
    .insertInto('document_tombstones')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** The workspaces with a retention, and theirs in days. */
export const workspacesWithRetention = (trx: Trx) =>
  trx
    .selectFrom('workspaces')
    .select(['id', 'retention_days'])
    .where('retention_days', '>=', 1)
    .execute()
    .then((rows) => rows.map((r) => ({ id: r.id, days: Number(r.retention_days) })));

/**
 * Up to `limit` of the workspace's documents that ended at or before `endedBy`, oldest end first; on PostgreSQL
 * locked for the caller's transaction, skipping rows another purger holds. In-progress documents have no end time.
 */
export const documentsEndedBy = (db: Db, trx: Trx, workspaceId: string, endedBy: number, limit: number) =>
  skipLocked(
    db,
    trx
      .selectFrom('documents')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where((eb) => eb(eb.fn.coalesce('completed_at', 'closed_at'), '<=', endedBy))
      .where('status', 'in', [...ENDED_DOCUMENT_STATUSES])
      .orderBy(sql`coalesce(completed_at, closed_at)`)
      .limit(limit),
  )
    .execute()
    .then((rows) => rows.map((r) => r.id));

export const retentionCutoff = (now: number, days: number) => now - days * DAY_MS;
