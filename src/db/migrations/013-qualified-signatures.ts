import type { Kysely } from 'kysely';

// Qualified signatures (issue 23). Additive and nullable only: a document's `signature_level` is null (ses) on every
// older row; `qes_blob`/`qes_sha256` name the document as it stands after its last qualified signer (null: nobody
// signed yet, the prepared PDF is current); `qes_lock_*` serializes qualified signers per document. A signing
// request's `qes` is the JSON record of its qualified signature (provider, certificate). One `qes_ceremonies` row per
// OAuth round trip with the provider: the hash of its `state`, the PKCE challenge (the verifier stays in the signer's
// browser), and once the hash is computed, the prepared revision and what to sign.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('documents').addColumn('signature_level', 'text').execute();
  await db.schema.alterTable('documents').addColumn('qes_blob', 'text').execute();
  await db.schema.alterTable('documents').addColumn('qes_sha256', 'text').execute();
  await db.schema.alterTable('documents').addColumn('qes_lock_request_id', 'text').execute();
  await db.schema.alterTable('documents').addColumn('qes_lock_until', 'bigint').execute();
  await db.schema.alterTable('signing_requests').addColumn('qes', 'text').execute();
  await db.schema
    .createTable('qes_ceremonies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id'))
    .addColumn('signing_request_id', 'text', (c) => c.notNull().references('signing_requests.id'))
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('state_hash', 'text', (c) => c.notNull())
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('inputs', 'text', (c) => c.notNull())
    .addColumn('credential', 'text')
    .addColumn('base_sha256', 'text')
    .addColumn('prepared_blob', 'text')
    .addColumn('to_sign', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('qes_ceremonies_request').on('qes_ceremonies').column('signing_request_id').execute();
}
