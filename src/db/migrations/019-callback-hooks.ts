import { sql, type Kysely } from 'kysely';

// Issue 25: the live callback hooks (a document's own, from `callback_url`) in creation order, the walk of the
// prune-events job that retires them once their document has ended (webhooks/retention.repo.ts). It holds only
// hooks not yet retired, so it stays as small as the documents in progress and recently ended. Additive only.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('hooks_live_callback')
    .ifNotExists()
    .on('hooks')
    .column('created_at')
    .where(sql<boolean>`deleted_at is null and document_id is not null`)
    .execute();
}
