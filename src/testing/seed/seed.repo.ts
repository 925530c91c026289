// The seeder's SQL: multi-row inserts of whole batches, and the write settings used only while seeding. One statement
// text per table and batch size, so SQLite prepares each once (db.ts caches by text) and PostgreSQL receives one JSON
// array of rows per statement (`jsonb_array_elements`, each cell cast to its column's type), whatever the row count:
// one JSON.stringify where the driver's array parameters (one per column, `unnest`) escaped cell by cell, which made
// a 50k seed cost 61 core-seconds instead of 53.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { SQLITE_CACHE_KIB, type Db } from '../../db/db.js';
import { fillSearchRows } from '../../db/migrations/025-search-rows.js';
import type { Database } from '../../db/schema.js';

export type SeedTable = keyof Database;
/** Column names, then one array of values per row in that order. */
export type Batch = { table: SeedTable; columns: readonly string[]; rows: unknown[][] };

// SQLite allows 32,766 bound values per statement; stay below it.
const SQLITE_MAX_VALUES = 32_000;
const PG_BATCH_ROWS = 5_000;

export type BulkWriter = {
  /**
   * Opens a bulk transaction. PostgreSQL: its commit does not wait for the WAL flush, and when `relaxed` and the
   * role is a superuser, row triggers (the foreign-key checks) are skipped: the seeder writes every reference
   * before its row.
   */
  begin(trx: Kysely<Database>, relaxed: boolean): Promise<void>;
  insert(trx: Kysely<Database>, b: Batch): Promise<void>;
};

export async function bulkWriter(db: Db): Promise<BulkWriter> {
  const texts = new Map<string, string>();
  if (db.dialect === 'sqlite') {
    return {
      begin: async () => undefined,
      async insert(trx, b) {
        const per = Math.max(1, Math.floor(SQLITE_MAX_VALUES / b.columns.length));
        for (let i = 0; i < b.rows.length; i += per) {
          const chunk = b.rows.slice(i, i + per);
          const k = `${b.table}:${chunk.length}`;
          let text = texts.get(k);
          if (text === undefined) {
            const one = `(${b.columns.map(() => '?').join(',')})`;
            text = `insert into "${b.table}" (${b.columns.map((c) => `"${c}"`).join(',')}) values ${Array(chunk.length).fill(one).join(',')}`;
            texts.set(k, text);
          }
          await trx.executeQuery(CompiledQuery.raw(text, chunk.flat()));
        }
      },
    };
  }
  const types = await columnTypes(db.kysely);
  const su = await sql<{ s: string }>`select current_setting('is_superuser') as s`.execute(db.kysely);
  const superuser = su.rows[0]?.s === 'on';
  return {
    async begin(trx, relaxed) {
      await sql`set local synchronous_commit = off`.execute(trx);
      if (relaxed && superuser) await sql`set local session_replication_role = replica`.execute(trx);
    },
    async insert(trx, b) {
      const k = b.table;
      let text = texts.get(k);
      if (text === undefined) {
        const cells = b.columns.map((c, i) => {
          const t = types.get(`${b.table}.${c}`);
          if (!t) throw new Error(`seed: no column ${b.table}.${c}`);
          return `(value ->> ${i})::${t}`;
        });
        text = `insert into "${b.table}" (${b.columns.map((c) => `"${c}"`).join(',')}) select ${cells.join(',')} from jsonb_array_elements($1::jsonb)`;
        texts.set(k, text);
      }
      for (let i = 0; i < b.rows.length; i += PG_BATCH_ROWS) {
        await trx.executeQuery(CompiledQuery.raw(text, [JSON.stringify(b.rows.slice(i, i + PG_BATCH_ROWS))]));
      }
    },
  };
}

async function columnTypes(k: Kysely<Database>): Promise<Map<string, string>> {
  const r = await sql<{ table_name: string; column_name: string; udt_name: string }>`
    select table_name, column_name, udt_name from information_schema.columns where table_schema = current_schema()
  `.execute(k);
  return new Map(r.rows.map((c) => [`${c.table_name}.${c.column_name}`, c.udt_name]));
}

/**
 * SQLite only: no fsync per commit and a larger page cache while seeding (a crash mid-seed loses the seed, nothing
 * else); `restore` puts back the settings openDb chose.
 */
export async function fastWrites(db: Db): Promise<{ restore(): Promise<void> }> {
  if (db.dialect !== 'sqlite') {
    // Per session: commits do not wait for the WAL flush. Only the seeder's own connections are affected.
    return { restore: async () => undefined };
  }
  await sql`pragma synchronous = OFF`.execute(db.kysely);
  await sql`pragma cache_size = -1048576`.execute(db.kysely);
  return {
    async restore() {
      await sql`pragma synchronous = NORMAL`.execute(db.kysely);
      await sql.raw(`pragma cache_size = -${SQLITE_CACHE_KIB}`).execute(db.kysely);
    },
  };
}

/**
 * SQLite only, and only into an empty history: indexing is deferred to the end of the load, as a restore does it.
 * - The search triggers (025's, as the database holds them) are dropped, since each document and signer row would
 *   otherwise write a search row and its FTS5 postings one by one (seeding took 1.7× as long).
 * - The indexes that are not unique are dropped (60; unique ones keep checking the load): built from all rows at once
 *   (2 s at 50k documents) they cost less than rows inserted into them one by one (a 50k seed took 35–42
 *   core-seconds instead of 44–48). On PostgreSQL the same made seeding slower (the two GIN indexes alone took 13 s
 *   to build, about 8 s as rows arrive), so nothing is deferred there.
 * `restore` creates the indexes again from their own text, fills the search rows and builds the search index in one
 * pass (025's own backfill), then puts the triggers back as they were, so every later write keeps both as the app
 * does. It runs once (the seeder calls it after the load and again on the way out of a failed one).
 */
export async function deferIndexes(db: Db): Promise<{ restore(): Promise<void> }> {
  const none = { restore: async () => undefined };
  if (db.dialect !== 'sqlite') return none;
  const filled = await sql<{ n: number }>`select exists (select 1 from document_search_rows) as n`.execute(db.kysely);
  if (filled.rows[0]!.n) return none;
  const triggers = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
    where type = 'trigger' and tbl_name in ('documents', 'signing_requests', 'document_search_rows')
      and name like '%search%' order by name`.execute(db.kysely);
  for (const t of triggers.rows) await sql`drop trigger ${sql.id(t.name)}`.execute(db.kysely);
  const indexes = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
    where type = 'index' and sql is not null and sql not like 'create unique %' order by name`.execute(db.kysely);
  for (const x of indexes.rows) await sql`drop index ${sql.id(x.name)}`.execute(db.kysely);
  let restored = false;
  return {
    async restore() {
      if (restored) return;
      restored = true;
      await db.kysely.transaction().execute(async (trx) => {
        for (const x of indexes.rows) await sql.raw(x.sql).execute(trx);
        await fillSearchRows(trx);
        for (const t of triggers.rows) await sql.raw(t.sql).execute(trx);
      });
    },
  };
}

/** Planner statistics after a bulk load, so the app's first queries see the real sizes. */
export async function analyze(db: Db): Promise<void> {
  await sql`analyze`.execute(db.kysely);
}

/**
 * After a bulk load, what a database that has held its history for a while has already done, so that a measurement
 * right after the seed does not pay for the seed: its writes on disk (SQLite: the WAL checkpointed into the file and
 * the file synced, which waits for the kernel to write the load's dirty pages; PostgreSQL: a checkpoint) and, on
 * PostgreSQL, a vacuum (the visibility maps index-only scans need, which autovacuum sets soon after a load).
 */
export async function settle(db: Db): Promise<void> {
  if (db.dialect === 'sqlite') {
    await sql`pragma wal_checkpoint(truncate)`.execute(db.kysely);
    return;
  }
  await sql`vacuum`.execute(db.kysely);
  await sql`checkpoint`.execute(db.kysely);
}

/** Rows per table, for the summary and the coherence test. */
export async function countRows(k: Kysely<Database>, table: SeedTable): Promise<number> {
  const r = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(k);
  return Number(r.rows[0]!.n);
}

/** The newest completed and the newest open document of a workspace: seeded rows for readers to check. */
export async function sampleDocuments(k: Kysely<Database>, workspaceId: string) {
  const pick = (status: string) =>
    k
      .selectFrom('documents')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', status)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  return { completed: (await pick('completed'))?.id ?? null, open: (await pick('in_progress'))?.id ?? null };
}

/** Up to `n` documents of a workspace spread over its history (the first id at or after each random prefix). */
export async function spreadDocumentIds(
  k: Kysely<Database>,
  workspaceId: string,
  prefixes: string[],
  status?: string,
): Promise<string[]> {
  const out = new Set<string>();
  for (const p of prefixes) {
    let q = k
      .selectFrom('documents')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('id', '>=', `doc_${p}`);
    if (status) q = q.where('status', '=', status);
    const r = await q.orderBy('id').limit(1).executeTakeFirst();
    if (r) out.add(r.id);
  }
  return [...out];
}

/** The dashboard's keyset cursor (`created_at.id`) of the document `depth` (0..1) down a workspace's list. */
export async function cursorAtDepth(k: Kysely<Database>, workspaceId: string, depth: number): Promise<string> {
  const total = await k
    .selectFrom('documents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  const row = await k
    .selectFrom('documents')
    .select(['created_at', 'id'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(Math.floor(Number(total.n) * depth))
    .limit(1)
    .executeTakeFirstOrThrow();
  return `${row.created_at}.${row.id}`;
}

/** Makes `n` settled deliveries of a workspace due now, for a claim benchmark (they are claimed and recorded again). */
export async function makeDeliveriesDue(k: Kysely<Database>, workspaceId: string, n: number, now: number) {
  const ids = await k
    .selectFrom('deliveries')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'succeeded')
    .orderBy('created_at', 'desc')
    .limit(n)
    .execute();
  if (ids.length === 0) return;
  const picked = ids.map((r) => r.id);
  await k
    .updateTable('deliveries')
    .set({ status: 'pending', next_attempt_at: now })
    .where('id', 'in', picked)
    .execute();
  // Open again, so queued again (migration 028: the trigger queues inserted rows only).
  await k
    .insertInto('delivery_queue')
    .columns(['id', 'next_attempt_at', 'attempts'])
    .expression(
      k
        .selectFrom('deliveries')
        .select((eb) => ['id', eb.val(now).as('next_attempt_at'), 'attempts'])
        .where('id', 'in', picked),
    )
    .execute();
}
