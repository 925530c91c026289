import type { Kysely } from 'kysely';

// Embedded signing sessions (issue 10): one row per minted session, bound to one signing request and one origin.
// Only the SHA-256 of the session token is kept. A server whose schema predates this answers 503
// embedding_unavailable on POST /v1/embedded/sign-sessions until `signet migrate` has run.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('embed_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('signing_request_id', 'text', (c) => c.notNull().references('signing_requests.id'))
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('embed_sessions_request').on('embed_sessions').column('signing_request_id').execute();
  await db.schema.createIndex('embed_sessions_expires').on('embed_sessions').column('expires_at').execute();
}
