import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.js';

// Issue 25, flat purge on SQLite: 016's triggers deleted a purged document's FTS5 rows by `source` and `document_id`,
// columns FTS5 does not index, so each deleted document and signer read the whole text index (39 ms a row at 100k
// documents, growing with the history, all of it under the one write lock). The texts now live in a plain table,
// `document_search_rows`, indexed by `source`, and `document_search` becomes an external-content FTS5 index of it:
// a delete finds its rows by index and removes them from the FTS5 index by rowid. The FTS5 table keeps its name and
// columns (`document_id` and `source` are read from the rows table), so a search written before this migration,
// during a rolling upgrade, still runs. PostgreSQL searches through pg_trgm indexes (016): nothing changes there.
// A row's id orders it by its document's creation: `created_at * SEARCH_ROWS_PER_MS` plus its place among the rows
// of that millisecond, so a search can ask the index for the matches of documents created since a time (a rowid
// range, which FTS5 seeks) instead of every match in the history (document-list.repo.ts).

/** Ids per millisecond of `created_at` in `document_search_rows` (2^20: ids stay below 2^63 until the year 2248). */
export const SEARCH_ROWS_PER_MS = 1_048_576;
/** The next free id among the rows of documents created at `createdAt` (an SQL expression). */
const nextId = (createdAt: string) =>
  `coalesce((select max(id) + 1 from document_search_rows
     where id >= ${createdAt} * ${SEARCH_ROWS_PER_MS} and id < (${createdAt} + 1) * ${SEARCH_ROWS_PER_MS}),
   ${createdAt} * ${SEARCH_ROWS_PER_MS})`;
const docCreated = (documentId: string) => `(select created_at from documents where id = ${documentId})`;

const OLD_TRIGGERS = ['documents', 'signing_requests'].flatMap((t) =>
  ['insert', 'update', 'delete'].map((op) => `${t}_search_${op}`),
);

/**
 * Writes the search rows of every document and signer into an empty `document_search_rows`, then builds the FTS5
 * index from them in one pass. 025 backfills with it; the seeder fills once after a load made with the search
 * triggers off (seed.repo.ts), instead of one trigger chain per row.
 */
export async function fillSearchRows(db: Kysely<any>): Promise<void> {
  await sql`insert into document_search_rows (id, text, document_id, source)
    select created_at * ${sql.lit(SEARCH_ROWS_PER_MS)} + row_number() over (partition by created_at order by source) - 1,
      text, document_id, source
    from (select created_at, title as text, id as document_id, id as source from documents
      union all select d.created_at, r.email, r.document_id, r.id
        from signing_requests r join documents d on d.id = r.document_id)`.execute(db);
  await sql`insert into document_search (document_search) values ('rebuild')`.execute(db);
}

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (const t of OLD_TRIGGERS) await sql`drop trigger if exists ${sql.id(t)}`.execute(db);
  await sql`drop table if exists document_search`.execute(db);
  await sql`create table document_search_rows (
    id integer primary key, text text, document_id text not null, source text not null
  )`.execute(db);
  await sql`create index document_search_rows_source on document_search_rows (source)`.execute(db);
  await sql`create virtual table document_search using fts5(
    text, document_id unindexed, source unindexed,
    content = 'document_search_rows', content_rowid = 'id', tokenize = 'trigram'
  )`.execute(db);
  await fillSearchRows(db);
  // FTS5 merges its index segments inside the inserting statement, by default once 4 of a level exist: at 1M
  // documents one create in 16 paid for a merge (POST p99 45.5 ms, instantiate 65.8). At 16 a level is merged less
  // often and in bigger steps (27.4 and 21.1 ms); a search reads a few more segments (BENCHMARKS.md, issue 25).
  await sql`insert into document_search (document_search, rank) values ('automerge', 16)`.execute(db);
  const triggers = [
    // The FTS5 index follows its rows table; an external-content delete names the row's indexed values.
    sql`create trigger document_search_rows_insert after insert on document_search_rows begin
      insert into document_search (rowid, text, document_id, source)
        values (new.id, new.text, new.document_id, new.source); end`,
    sql`create trigger document_search_rows_delete after delete on document_search_rows begin
      insert into document_search (document_search, rowid, text, document_id, source)
        values ('delete', old.id, old.text, old.document_id, old.source); end`,
    sql`create trigger documents_search_insert after insert on documents begin
      insert into document_search_rows (id, text, document_id, source)
        values (${sql.raw(nextId('new.created_at'))}, new.title, new.id, new.id); end`,
    sql`create trigger documents_search_update after update of title on documents begin
      delete from document_search_rows where source = old.id;
      insert into document_search_rows (id, text, document_id, source)
        values (${sql.raw(nextId('new.created_at'))}, new.title, new.id, new.id); end`,
    // A document's signers' rows go with their own rows (purge deletes the signers first).
    sql`create trigger documents_search_delete after delete on documents begin
      delete from document_search_rows where source = old.id; end`,
    sql`create trigger signing_requests_search_insert after insert on signing_requests begin
      insert into document_search_rows (id, text, document_id, source)
        values (${sql.raw(nextId(docCreated('new.document_id')))}, new.email, new.document_id, new.id); end`,
    sql`create trigger signing_requests_search_update after update of email on signing_requests begin
      delete from document_search_rows where source = old.id;
      insert into document_search_rows (id, text, document_id, source)
        values (${sql.raw(nextId(docCreated('new.document_id')))}, new.email, new.document_id, new.id); end`,
    sql`create trigger signing_requests_search_delete after delete on signing_requests begin
      delete from document_search_rows where source = old.id; end`,
  ];
  for (const t of triggers) await t.execute(db);
}
