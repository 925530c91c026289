import type { Kysely } from 'kysely';

// Dashboard drafts (issue 24, point 1): a PDF uploaded on /dashboard/send and the form and fields placed on it so
// far, kept until it is sent or deleted. A new table only; older code never reads it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dashboard_drafts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('created_by', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('pdf_blob', 'text', (c) => c.notNull())
    .addColumn('pages', 'text', (c) => c.notNull())
    .addColumn('form', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dashboard_drafts_by_workspace')
    .on('dashboard_drafts')
    .columns(['workspace_id', 'updated_at'])
    .execute();
}
