import type { Kysely } from 'kysely';

// Signer verification (issue 22): a signer may have to prove control of their e-mail address or phone with a
// six-digit code before the document is shown. Additive and nullable only: `verification` is null (none) on every
// older row, and code written before this migration never reads the new columns (rolling upgrades: ARCHITECTURE.md).
// One `signer_codes` row per code sent (`seq`: 1, 2, … per request; the newest is the one checked): only its hash, its expiry, the wrong tries and when it was used; the send
// limit counts these rows. Numbered 011: 012 is the reminders' change.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signing_requests').addColumn('verification', 'text').execute();
  await db.schema.alterTable('signing_requests').addColumn('verified_at', 'bigint').execute();
  await db.schema
    .createTable('signer_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id'))
    .addColumn('signing_request_id', 'text', (c) => c.notNull().references('signing_requests.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('tries', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('signer_codes_request')
    .on('signer_codes')
    .columns(['signing_request_id', 'seq'])
    .unique()
    .execute();
}
