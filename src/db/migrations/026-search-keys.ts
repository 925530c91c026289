import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.js';

// Issue 25, a search whose matches are all old, on PostgreSQL: pg_trgm's GIN indexes (016) cannot give matches newest
// first, so finding the newest page of a term absent from the last year read every match in the history, each window
// again (1 s at 1M documents). Here each title and e-mail is indexed under keys that carry their time: every 3
// characters in a row of the lower-cased text, once under the day of the row's `created_at` (`d<day>:abc`) and once
// under its 32-day period (`p<period>:abc`). A text holding a substring holds each of its 3-character pieces, so a
// search asks the index for the rows of one period or day that hold them all (`@>`), newest first, and checks each
// with the same `lower(…) like …` as before (signing/document-search.repo.ts). An empty period costs a few index
// lookups whatever the history's size. Nothing of pg_trgm is used: the keys are plain substrings, any script, `%` and
// `_` included. 016's trigram indexes go: nothing reads them now, every write paid for them, and the planner would
// pick them for the `like` check, reading every match in the history again. Code from before this migration, during
// a rolling upgrade, then reads its search windows through the list's index instead (slower, still correct). SQLite
// searches through FTS5 (025): nothing changes there.

/** Milliseconds per day and per period of the search keys (a period is 32 days). */
export const SEARCH_DAY_MS = 86_400_000;
export const SEARCH_PERIOD_MS = 32 * SEARCH_DAY_MS;

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`create or replace function signet_search_keys(at bigint, t text) returns text[]
    language sql immutable strict parallel safe as $$
      select coalesce(array_agg(distinct k), '{}')
      from (select lower(t) as l) x, generate_series(1, length(x.l) - 2) i,
        lateral (values
          ('d' || (at / ${sql.lit(SEARCH_DAY_MS)}) || ':' || substr(x.l, i, 3)),
          ('p' || (at / ${sql.lit(SEARCH_PERIOD_MS)}) || ':' || substr(x.l, i, 3))) v(k)
    $$`.execute(db);
  await sql`create index if not exists documents_search_keys on documents
    using gin (signet_search_keys(created_at, title))`.execute(db);
  await sql`create index if not exists signing_requests_search_keys on signing_requests
    using gin (signet_search_keys(created_at, email))`.execute(db);
  await sql`drop index if exists documents_title_trgm`.execute(db);
  await sql`drop index if exists signing_requests_email_trgm`.execute(db);
}
