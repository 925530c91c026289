// The orphan check's SQL (blob-orphans.ts). The candidates live in a temporary table on one pinned connection; what
// names a blob is every column called `*_blob` (the schema's convention) and the deletion queue.
import { sql, type Kysely } from 'kysely';
import { absentFrom, type Db } from '../db/db.js';
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

/**
 * The candidates nothing names, read in one statement (one snapshot: a blob a draft hands to its document is seen in
 * one column or the other) and without the write lock, each column read once (`absentFrom`).
 */
export async function unnamedCandidates(
  db: Db,
  conn: Kysely<Database>,
  columns: readonly { table: string; column: string }[],
  limit: number,
): Promise<string[]> {
  const named = [...columns, { table: 'blob_deletions', column: 'key' }].map((c) =>
    absentFrom(db, sql`c.key`, c.table, c.column),
  );
  const r = await sql<{ key: string }>`select c.key from ${sql.table(CANDIDATES)} c
    where ${sql.join(named, sql` and `)} order by c.key limit ${limit}`.execute(conn);
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
