import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.js';

// Issue 25: indexes for the hot paths that query-plans.test.ts found reading a growing table whole or sorting all of
// a workspace's rows for one page, and the text index of the dashboard's document search. Additive only: new indexes
// and, on SQLite, a new FTS5 table kept by triggers; no column or table older code reads changes.
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const index = (name: string, table: string, columns: string[]) =>
    db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
  // Keyset pages, newest first: the list's whole order is in the index, so a page deep in the list is one seek.
  await index('documents_workspace_page', 'documents', ['workspace_id', 'created_at', 'id']);
  await index('documents_workspace_status_page', 'documents', ['workspace_id', 'status', 'created_at', 'id']);
  await index('deliveries_workspace_page', 'deliveries', ['workspace_id', 'created_at', 'id']);
  await index('audit_log_workspace_id', 'audit_log', ['workspace_id', 'id']);
  await index('template_instances_workspace_review', 'template_instances', [
    'workspace_id',
    'status',
    'review_expires_at',
    'id',
  ]);
  // The templates list's "last used": the newest instance per template.
  await index('template_instances_template_created', 'template_instances', ['template_id', 'created_at']);
  // An event's hooks: the workspace's own and its document's callback hook, not every document's.
  await index('hooks_workspace_document', 'hooks', ['workspace_id', 'document_id']);
  // send-reminders: the due reminders of open requests, not every open request.
  await index('signing_requests_reminder_due', 'signing_requests', ['status', 'next_reminder_at']);

  if (dialect === 'postgres') {
    // pg_trgm is a trusted extension (PostgreSQL 13+): a database owner may create it. Its GIN indexes answer the
    // search's own `lower(…) like lower(?) escape '!'`, so the query's meaning stays the LIKE's.
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index if not exists documents_title_trgm on documents using gin (lower(title) gin_trgm_ops)`.execute(
      db,
    );
    await sql`create index if not exists signing_requests_email_trgm on signing_requests
      using gin (lower(email) gin_trgm_ops)`.execute(db);
    return;
  }
  // SQLite: one FTS5 row per searchable text (a document's title, each signer's e-mail), so a match never spans two
  // of them; `source` is the row the text came from. Trigram makes MATCH a case-insensitive substring test
  // (Unicode case folding, diacritics kept). Rows are only ever inserted by the code; the update and delete
  // triggers, which find rows by an unindexed column, serve hand edits and retention.
  await sql`create virtual table document_search using fts5(
    text, document_id unindexed, source unindexed, tokenize = 'trigram'
  )`.execute(db);
  const triggers = [
    sql`create trigger documents_search_insert after insert on documents begin
      insert into document_search (text, document_id, source) values (new.title, new.id, new.id); end`,
    sql`create trigger documents_search_update after update of title on documents begin
      delete from document_search where source = old.id;
      insert into document_search (text, document_id, source) values (new.title, new.id, new.id); end`,
    sql`create trigger documents_search_delete after delete on documents begin
      delete from document_search where document_id = old.id; end`,
    sql`create trigger signing_requests_search_insert after insert on signing_requests begin
      insert into document_search (text, document_id, source) values (new.email, new.document_id, new.id); end`,
    sql`create trigger signing_requests_search_update after update of email on signing_requests begin
      delete from document_search where source = old.id;
      insert into document_search (text, document_id, source) values (new.email, new.document_id, new.id); end`,
    sql`create trigger signing_requests_search_delete after delete on signing_requests begin
      delete from document_search where source = old.id; end`,
  ];
  for (const t of triggers) await t.execute(db);
  await sql`insert into document_search (text, document_id, source) select title, id, id from documents`.execute(db);
  await sql`insert into document_search (text, document_id, source)
    select email, document_id, id from signing_requests`.execute(db);
}
