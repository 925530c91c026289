import type { Kysely } from 'kysely';

// Issue 25, dispatch near the ceiling: purge_attempts_delivery (021) indexed delivery_attempts by delivery_id alone,
// which the unique (delivery_id, attempt) index already answers as its prefix; every recorded attempt paid for both.
// Code from before this migration finds its attempts through that prefix too.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('purge_attempts_delivery').ifExists().execute();
}
