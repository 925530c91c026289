import type { Kysely } from 'kysely';

// The signer's copy (issue 21): one row per completed document's signer who was mailed a download link for the
// sealed PDF and the audit certificate. Only the SHA-256 of the link token is kept. Numbered 010: 009 is another
// change's. Code on a schema without this table mails the completion notice without a link (signing/copy.service.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signer_copies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id'))
    .addColumn('signing_request_id', 'text', (c) => c.notNull().references('signing_requests.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signer_copies_document').on('signer_copies').column('document_id').execute();
}
