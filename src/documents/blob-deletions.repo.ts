// The queue of blobs to delete (migration 021). A key is queued in the transaction that stops referencing it, so
// it is deleted only once nothing points at it, and stays queued until its deletion is done.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export async function queueBlobDeletions(trx: Kysely<Database>, keys: readonly string[], now: number): Promise<void> {
  const unique = [...new Set(keys)];
  if (unique.length === 0) return;
  await trx
    .insertInto('blob_deletions')
    .values(unique.map((key) => ({ key, created_at: now, last_error: null })))
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
}

/** The oldest keys queued by `now` (up to `limit`), or of `only` those still queued. */
export const queuedBlobDeletions = (db: Kysely<Database>, now: number, limit: number, only?: readonly string[]) => {
  const q = db.selectFrom('blob_deletions').select('key');
  return (
    only
      ? q.where('key', 'in', only.length ? [...only] : ['']).limit(limit)
      : q.where('created_at', '<=', now).orderBy('created_at').limit(limit)
  )
    .execute()
    .then((rows) => rows.map((r) => r.key));
};

export async function forgetBlobDeletions(db: Kysely<Database>, keys: readonly string[]): Promise<void> {
  if (keys.length)
    await db
      .deleteFrom('blob_deletions')
      .where('key', 'in', [...keys])
      .execute();
}

export async function recordBlobDeletionFailure(db: Kysely<Database>, key: string, error: string): Promise<void> {
  await db
    .updateTable('blob_deletions')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error.slice(0, 500) }))
    .where('key', '=', key)
    .execute();
}

/** How many deletions are still queued (operators, tests). */
export const countBlobDeletions = async (db: Kysely<Database>): Promise<number> =>
  Number(
    (
      await db
        .selectFrom('blob_deletions')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst()
    )?.n ?? 0,
  );
