import { sql, type Kysely } from 'kysely';

// Issue 26, purge and retention. Additive only: a workspace's retention in days (null: keep forever); the tombstone
// a purged document leaves (its id, hashes and times, nothing personal) for the verification report; the queue of
// blobs to delete, written in the purge's own transaction and drained after the commit (and by the hourly
// purge-documents job until it is empty), so a crash in between never orphans a blob for good. The indexes let a
// purge find each of a document's rows by the document (or its requests), and the job find the workspaces with a
// retention and their documents by when they ended, without reading a growing table whole (query-plans.test.ts).
export async function up(db: Kysely<any>): Promise<void> {
  const index = (name: string, table: string, columns: string[]) =>
    db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
  await db.schema.alterTable('workspaces').addColumn('retention_days', 'bigint').execute();
  await db.schema
    .createTable('document_tombstones')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('original_sha256', 'text', (c) => c.notNull())
    .addColumn('signed_sha256', 'text')
    .addColumn('seal_revision_sha256', 'text')
    .addColumn('audit_last_hash', 'text')
    .addColumn('completed_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('purged_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('document_tombstones_signed')
    .ifNotExists()
    .on('document_tombstones')
    .column('signed_sha256')
    .execute();
  await db.schema
    .createIndex('document_tombstones_revision')
    .ifNotExists()
    .on('document_tombstones')
    .column('seal_revision_sha256')
    .execute();
  await db.schema
    .createTable('blob_deletions')
    .ifNotExists()
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .execute();
  await index('blob_deletions_created', 'blob_deletions', ['created_at']);
  await index('purge_workspaces_retention', 'workspaces', ['retention_days']);
  await sql`create index if not exists purge_documents_ended on documents
    (workspace_id, coalesce(completed_at, closed_at))`.execute(db);
  await index('purge_events_document', 'events', ['document_id']);
  await index('purge_attempts_delivery', 'delivery_attempts', ['delivery_id']);
  await index('purge_sms_outbox_document', 'sms_outbox', ['document_id']);
  await index('purge_audit_log_target', 'audit_log', ['target_id']);
  await index('purge_bulk_rows_instance', 'bulk_send_rows', ['template_instance_id']);
  // Deleting a signing request or document checks the rows that reference it (SQLite's foreign keys): by index.
  await index('purge_signer_copies_request', 'signer_copies', ['signing_request_id']);
  await index('purge_signer_codes_document', 'signer_codes', ['document_id']);
  await index('purge_qes_ceremonies_document', 'qes_ceremonies', ['document_id']);
}
