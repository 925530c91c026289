import type { Kysely } from 'kysely';

// Bulk sends (issue 24): one `bulk_sends` row per upload (a lease-claimed job: `claimed_by`, `claim_expires_at`) and
// one `bulk_send_rows` row per data row, keyed by (bulk send, row number). New tables only; older code never reads
// them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('bulk_sends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id'))
    .addColumn('template_version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('sent', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addColumn('created_by', 'text')
    .addColumn('form_key', 'text')
    .addColumn('client_meta', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claim_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  // A dashboard form's one-time key: the same Send posted twice makes one bulk send.
  await db.schema
    .createIndex('bulk_sends_form_key')
    .on('bulk_sends')
    .columns(['workspace_id', 'form_key'])
    .unique()
    .execute();
  await db.schema.createIndex('bulk_sends_due').on('bulk_sends').columns(['status', 'created_at']).execute();
  await db.schema
    .createTable('bulk_send_rows')
    .addColumn('bulk_send_id', 'text', (c) => c.notNull().references('bulk_sends.id'))
    .addColumn('row', 'integer', (c) => c.notNull())
    .addColumn('input', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('template_instance_id', 'text')
    .addColumn('problems', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('bulk_send_rows_pk', ['bulk_send_id', 'row'])
    .execute();
}
