// The orphan check's SQL (blob-orphans.ts). The candidates live in a temporary table on one pinned connection; what
// names a blob is every column called `*_blob` (the schema's convention) and the deletion queue.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

const CANDIDATES = 'blob_orphan_candidates';

/** Every `table.column` that holds a blob key, read from the live schema (so a new `*_blob` column is covered). */
export async function blobColumns(db: Kysely<Database>): Promise<{ table: string; column: string }[]> {
  const tables = await db.introspection.getTables();
  return tables
    .filter((t) => !t.isView)
    .flatMap((t) => t.columns.filter((c) => c.name.endsWith('_blob')).map((c) => ({ table: t.name, column: c.name })));
}

export async function createCandidates(conn: Kysely<Database>): Promise<void> {
  await sql`drop table if exists ${sql.table(CANDIDATES)}`.execute(conn);
  await sql`create temporary table ${sql.table(CANDIDATES)} (key text primary key)`.execute(conn);
}

export async function addCandidates(conn: Kysely<Database>, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await sql`insert into ${sql.table(CANDIDATES)} (key) values ${sql.join(keys.map((k) => sql`(${k})`))}
    on conflict do nothing`.execute(conn);
}

/** Drops the candidates `table.column` names: one pass over that table, whatever the number of candidates. */
export async function dropNamed(conn: Kysely<Database>, table: string, column: string): Promise<void> {
  await sql`delete from ${sql.table(CANDIDATES)} where key in
    (select ${sql.ref(column)} from ${sql.table(table)} where ${sql.ref(column)} is not null)`.execute(conn);
}

export const remainingCandidates = async (conn: Kysely<Database>, limit: number): Promise<string[]> =>
  (
    await sql<{ key: string }>`select key from ${sql.table(CANDIDATES)} order by key limit ${limit}`.execute(conn)
  ).rows.map((r) => r.key);

/**
 * Queues the candidates still named by nothing, checked again in one statement (one snapshot: a blob a draft hands to
 * its document between two of the passes above is seen in one column or the other). Returns the keys queued.
 */
export async function queueUnnamed(
  conn: Kysely<Database>,
  columns: readonly { table: string; column: string }[],
  now: number,
): Promise<string[]> {
  const named = columns.map(
    (c) => sql`not exists (select 1 from ${sql.table(c.table)} where ${sql.ref(c.column)} = c.key)`,
  );
  const r = await sql<{ key: string }>`insert into blob_deletions (key, created_at, attempts, last_error)
    select c.key, ${now}, 0, null from ${sql.table(CANDIDATES)} c
    where ${sql.join([...named, sql`not exists (select 1 from blob_deletions d where d.key = c.key)`], sql` and `)}
    on conflict do nothing returning key`.execute(conn);
  return r.rows.map((row) => row.key);
}

export async function dropCandidates(conn: Kysely<Database>): Promise<void> {
  await sql`drop table if exists ${sql.table(CANDIDATES)}`.execute(conn);
}

/** The database store's keys written before `before`, in key order after `after` (a page of the listing). */
export const blobKeysBefore = async (db: Kysely<Database>, before: number, after: string, limit: number) =>
  (
    await db
      .selectFrom('blobs')
      .select('key')
      .where('created_at', '<', before)
      .where('key', '>', after)
      .orderBy('key')
      .limit(limit)
      .execute()
  ).map((r) => r.key);
