import type { Kysely } from 'kysely';

// Templates (issue 9): numbered immutable versions, instances (instantiate or generate, optionally staged for review),
// the SMS outbox, and the template columns of documents and signing requests. The columns added to existing tables
// are nullable and written only by template code, so a server whose code is newer than its schema keeps creating
// signing requests (SIGNET_AUTO_MIGRATE=0 during a rolling upgrade); templates answer 503 until this has run.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('current_version', 'integer', (c) => c.notNull())
    .addColumn('archived_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('templates_workspace_created')
    .on('templates')
    .columns(['workspace_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('template_versions')
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('page_count', 'integer', (c) => c.notNull())
    .addColumn('original_sha256', 'text', (c) => c.notNull())
    .addColumn('original_blob', 'text', (c) => c.notNull())
    .addColumn('prepared_sha256', 'text', (c) => c.notNull())
    .addColumn('prepared_blob', 'text', (c) => c.notNull())
    .addColumn('slots', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('template_versions_pk', ['template_id', 'version'])
    .execute();

  await db.schema
    .createTable('template_instances')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id'))
    .addColumn('template_version', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('document_id', 'text', (c) => c.notNull().unique())
    .addColumn('recipients', 'text', (c) => c.notNull())
    .addColumn('field_values', 'text', (c) => c.notNull())
    .addColumn('review_token_hash', 'text', (c) => c.unique())
    .addColumn('review_expires_at', 'bigint')
    .addColumn('staged_at', 'bigint')
    .addColumn('confirmed_at', 'bigint')
    .addColumn('confirmed_by', 'text')
    .addColumn('discarded_at', 'bigint')
    .addColumn('discard_reason', 'text')
    .addColumn('created_by_key_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('template_instances_review_due')
    .on('template_instances')
    .columns(['status', 'review_expires_at'])
    .execute();

  await db.schema.alterTable('documents').addColumn('template_id', 'text').execute();
  await db.schema.alterTable('documents').addColumn('template_version', 'integer').execute();
  await db.schema.alterTable('signing_requests').addColumn('channel', 'text').execute();
  await db.schema.alterTable('signing_requests').addColumn('phone', 'text').execute();
  await db.schema.alterTable('signing_requests').addColumn('routing_order', 'integer').execute();

  await db.schema
    .createTable('sms_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('document_id', 'text')
    .addColumn('signing_request_id', 'text')
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('to_phone', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('claimed_by', 'text')
    .addColumn('claim_expires_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('provider_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await db.schema.createIndex('sms_outbox_due').on('sms_outbox').columns(['status', 'next_attempt_at']).execute();
}
