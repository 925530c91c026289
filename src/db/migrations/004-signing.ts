import type { Kysely } from 'kysely';

// Documents, their per-signer signing requests, the per-document audit hash chain, and database blobs
// (used on PostgreSQL so every instance sees every PDF; SQLite keeps blobs as files).
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('signing_order', 'text', (c) => c.notNull())
    .addColumn('placement', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('page_count', 'integer', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('original_sha256', 'text', (c) => c.notNull())
    .addColumn('original_blob', 'text', (c) => c.notNull())
    .addColumn('prepared_sha256', 'text', (c) => c.notNull())
    .addColumn('prepared_blob', 'text', (c) => c.notNull())
    .addColumn('signed_blob', 'text')
    .addColumn('signed_sha256', 'text')
    .addColumn('cert_serial', 'text')
    .addColumn('tsa_provider', 'text')
    .addColumn('tsa_signed_at', 'text')
    .addColumn('callback_hook_id', 'text')
    .addColumn('created_by_key_id', 'text')
    .addColumn('seal_state', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('seal_claimed_by', 'text')
    .addColumn('seal_claim_expires_at', 'bigint')
    .addColumn('seal_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('seal_last_error', 'text')
    .addColumn('final_request_id', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addColumn('closed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('documents_workspace_created')
    .on('documents')
    .columns(['workspace_id', 'created_at'])
    .execute();
  await db.schema.createIndex('documents_seal').on('documents').columns(['seal_state']).execute();

  await db.schema
    .createTable('signing_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addColumn('released_at', 'bigint')
    .addColumn('viewed_at', 'bigint')
    .addColumn('signed_at', 'bigint')
    .addColumn('declined_at', 'bigint')
    .addColumn('decline_reason', 'text')
    .addColumn('closed_at', 'bigint')
    .addColumn('signature_kind', 'text')
    .addColumn('signature_text', 'text')
    .addColumn('signature_blob', 'text')
    .addColumn('field_values', 'text')
    .addColumn('view_ip', 'text')
    .addColumn('view_ua', 'text')
    .addColumn('sign_ip', 'text')
    .addColumn('sign_ua', 'text')
    .addColumn('reminded_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('signing_requests_doc_slot', ['document_id', 'slot'])
    .execute();
  await db.schema
    .createIndex('signing_requests_due')
    .on('signing_requests')
    .columns(['status', 'expires_at'])
    .execute();

  const t = db.schema.createTable('audit_events');
  await (
    dialect === 'postgres'
      ? t.addColumn('id', 'bigserial', (c) => c.primaryKey())
      : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('document_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('signing_request_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('detail', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addUniqueConstraint('audit_events_doc_seq', ['document_id', 'seq'])
    .execute();

  await db.schema
    .createTable('blobs')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}
