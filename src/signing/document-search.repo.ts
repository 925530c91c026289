// The PostgreSQL side of the dashboard's search (document-list.repo.ts): the newest page of a workspace's documents
// whose title or a signer's e-mail holds a substring, read from migration 026's time-keyed GIN indexes, newest first.
// Guarantee: the cost follows the periods and days read back to the page's last match, and the matches in them, not
// the size of the history: an empty 32-day period is a few index lookups; a period is read whole when it holds a few
// pages of matches (a capped read tells), else day by day.
// Completeness: a title is keyed by its document's day, an e-mail by its request's, which is never older than its
// document's. Once every day back to a time T has been read, every match created since T has been found.
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Database } from '../db/schema.js';
import { SEARCH_DAY_MS, SEARCH_PERIOD_MS } from '../db/migrations/026-search-keys.js';

type Scoped = <Q extends SelectQueryBuilder<Database, 'documents', object>>(q: Q) => Q;
/** Days of a period read at once, at most (doubling from one), once the period holds too many matches to read whole. */
const MAX_DAYS_AT_ONCE = 8;
/** Periods read at once, at most (doubling from one). */
const MAX_PERIODS_AT_ONCE = 4;
/** A period (or a few) is read whole when it holds at most this many pages of matches per arm. */
const PERIOD_CAP_PAGES = 4;
const DAYS_PER_PERIOD = SEARCH_PERIOD_MS / SEARCH_DAY_MS;

/**
 * The ids of the page, in list order (`created_at` then `id`, newest first). `scoped` adds the list's workspace,
 * status and cursor conditions to a documents query; `edges` are the scope's newest and oldest creation times.
 */
export async function keyWindows(
  db: Kysely<Database>,
  o: {
    workspaceId: string;
    search: string;
    /** The search's own check of a column (document-list.repo.ts: `lower(…) like lower(?) escape '!'`). */
    contains: (column: string) => RawBuilder<boolean>;
    limit: number;
    before?: { createdAt: number; id: string };
  },
  scoped: Scoped,
  edges: { newest: number; oldest: number },
): Promise<string[]> {
  const grams = await piecesOf(db, o.search);
  const found = new Map<string, number>();
  for (const r of await scoped(db.selectFrom('documents'))
    .select(['id', 'created_at'])
    .where('id', '=', o.search)
    .execute())
    found.set(r.id, r.created_at);
  const keyed = (
    column: 'documents.title' | 'r.email',
    at: 'documents.created_at' | 'r.created_at',
    keys: string[][],
  ) =>
    sql<SqlBool>`(${sql.join(
      keys.map((k) => sql`signet_search_keys(${sql.ref(at)}, ${sql.ref(column)}) @> ${k}::text[]`),
      sql` or `,
    )})`;
  const keysOf = (prefix: 'p' | 'd', units: number[]) => units.map((u) => grams.map((g) => `${prefix}${u}:${g}`));
  // The matches among these keys' rows: titles of documents made on those days or periods, documents of requests
  // made on them; with `cap`, at most cap + 1 of each arm, and whether that was all of them. A union, so each arm
  // reads its own index (an `or` of the two reads every document of the workspace).
  const read = async (keys: string[][], cap?: number) => {
    const docs = () => scoped(db.selectFrom('documents')).select(['documents.id', 'documents.created_at']);
    const titles = docs()
      .select(sql.lit('title').as('arm'))
      .where(keyed('documents.title', 'documents.created_at', keys))
      .where(o.contains('documents.title'))
      .$if(cap !== undefined, (q) => q.limit(cap! + 1));
    const emails = docs()
      .select(sql.lit('email').as('arm'))
      .where(
        'documents.id',
        'in',
        db
          .selectFrom('signing_requests as r')
          .select('r.document_id')
          .where('r.workspace_id', '=', o.workspaceId)
          .where(keyed('r.email', 'r.created_at', keys))
          .where(o.contains('r.email')),
      )
      .$if(cap !== undefined, (q) => q.limit(cap! + 1));
    const rows = await db
      .selectFrom(titles.as('t'))
      .selectAll()
      .unionAll(db.selectFrom(emails.as('e')).selectAll())
      .execute();
    for (const r of rows) found.set(r.id, r.created_at);
    const over = (arm: string) => rows.filter((r) => r.arm === arm).length > (cap ?? Infinity);
    return !over('title') && !over('email');
  };
  const ordered = () =>
    [...found]
      .filter(([id, at]) => !o.before || at < o.before.createdAt || (at === o.before.createdAt && id < o.before.id))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : -1));
  // A full page of matches made since `since`, all of which have been found.
  const full = (since: number) => ordered().filter(([, at]) => at >= since).length >= o.limit;
  const page = () =>
    ordered()
      .slice(0, o.limit)
      .map(([id]) => id);
  if (grams.length === 0) return page();

  const top = Math.min(edges.newest, o.before?.createdAt ?? Infinity);
  const [topPeriod, lastPeriod] = [Math.floor(top / SEARCH_PERIOD_MS), Math.floor(edges.oldest / SEARCH_PERIOD_MS)];
  const [topDay, lastDay] = [Math.floor(top / SEARCH_DAY_MS), Math.floor(edges.oldest / SEARCH_DAY_MS)];
  const cap = PERIOD_CAP_PAGES * o.limit;
  // Periods newest first, a few at once while they hold no more than `cap` matches; a period holding more is read
  // by days.
  for (let p = topPeriod, n = 1; p >= lastPeriod; p -= n, n = Math.min(2 * n, MAX_PERIODS_AT_ONCE)) {
    const periods = range(p, Math.max(p - n + 1, lastPeriod));
    if (!(await read(keysOf('p', periods), cap)))
      for (const q of periods) {
        if (periods.length > 1 && (await read(keysOf('p', [q]), cap))) {
          if (full(q * SEARCH_PERIOD_MS)) return page();
          continue;
        }
        const first = Math.min(topDay, (q + 1) * DAYS_PER_PERIOD - 1);
        const last = Math.max(lastDay, q * DAYS_PER_PERIOD);
        for (let d = first, m = 1; d >= last; d -= m, m = Math.min(2 * m, MAX_DAYS_AT_ONCE)) {
          const days = range(d, Math.max(d - m + 1, last));
          await read(keysOf('d', days));
          if (full(days.at(-1)! * SEARCH_DAY_MS)) return page();
        }
      }
    if (full(periods.at(-1)! * SEARCH_PERIOD_MS)) return page();
  }
  return page();
}

/** Every 3 characters in a row of the lower-cased term, as PostgreSQL lower-cases it (the index's own `lower`). */
async function piecesOf(db: Kysely<Database>, term: string): Promise<string[]> {
  const r = await sql<{ piece: string }>`select distinct substr(x.l, i, 3) as piece
    from (select lower(${term}::text) as l) x, generate_series(1, length(x.l) - 2) i`.execute(db);
  return r.rows.map((x) => x.piece);
}

const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);
