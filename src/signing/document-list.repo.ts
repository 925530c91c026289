// A workspace's document list for the dashboard: keyset pages, a status filter and the search (a substring of the
// title or a signer's e-mail, or the exact id). Guarantee: a page's cost does not grow with the workspace's history;
// a search reads a bounded window of the newest documents or the text index's candidates, never every document
// (ARCHITECTURE.md, "Indexes and query plans").
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { SEARCH_ROWS_PER_MS } from '../db/migrations/025-search-rows.js';
import { keyWindows } from './document-search.repo.js';
import type { DocumentStatus, RequestStatus } from './states.js';

type Trx = Kysely<Database>;

/** One row of a workspace's document list: the document, its template if any, and each signer's state. */
export type DocumentListRow = {
  id: string;
  title: string;
  status: DocumentStatus;
  created_at: number;
  completed_at: number | null;
  template_id: string | null;
  template_version: number | null;
  template_name: string | null;
  instance_id: string | null;
  instance_status: string | null;
  signers: { email: string; phone: string | null; name: string; status: RequestStatus }[];
};

/** `%`, `_` and the escape character itself match literally (`… LIKE ? ESCAPE '!'`, on SQLite and PostgreSQL). */
const likeContains = (text: string) => `%${text.replace(/[!%_]/g, '!$&')}%`;

/**
 * Whether the text index is asked for `text`: it holds 3 letters or digits in a row. Both indexes need 3 characters;
 * a term of punctuation and short words is rare, and the walk answers it.
 */
export const trigramSearchable = (text: string) => /[\p{L}\p{N}]{3}/u.test(text);

/**
 * One page of a workspace's documents, newest first (keyset: `before` is the previous page's last row), optionally
 * of one status and matching `search`: a case-insensitive substring of the title or of a signer's e-mail, or the
 * exact document id. Staged template documents have no signers yet, so only their title and id match.
 * A search with 3 letters or digits in a row reads its candidates from the text index (`textIndex`: null before
 * its migration ran, db.ts `substringIndexMigration`); any other walks the workspace's documents newest first and
 * stops when the page is full, as does a search on a schema without the index.
 */
/** How many of the newest documents a searchable term is looked for in before the text index is asked. */
const SEARCH_WALK_ROWS = 500;
/** The first FTS5 rowid of documents created at `ms` (migration 025), computed by SQLite: it is past 2^53. */
const rowAt = (ms: number) => sql`(cast(${ms} as integer) * ${sql.lit(SEARCH_ROWS_PER_MS)})`;

export async function listWorkspaceDocuments(
  db: Trx,
  o: {
    workspaceId: string;
    status?: DocumentStatus;
    search?: string;
    before?: { createdAt: number; id: string };
    limit: number;
    textIndex: 'fts5' | 'pg_keys' | null;
    /** How many of the newest documents a search walks before it asks the text index (tests make it small). */
    walkRows?: number;
  },
): Promise<DocumentListRow[]> {
  const walkRows = o.walkRows ?? SEARCH_WALK_ROWS;
  const scoped = <Q extends SelectQueryBuilder<Database, 'documents', object>>(q: Q): Q => {
    let r = q.where('documents.workspace_id', '=', o.workspaceId);
    if (o.status) r = r.where('documents.status', '=', o.status);
    if (o.before) {
      const b = o.before;
      // A row comparison, so the (workspace_id, created_at, id) index seeks to the page instead of filtering to it.
      r = r.where((eb) => eb(eb.refTuple('documents.created_at', 'documents.id'), '<', eb.tuple(b.createdAt, b.id)));
    }
    return r as Q;
  };
  // The list's rows: the workspace's documents (or, for `window`, only its newest `window` of them, in list order:
  // read straight from the list's index, so the page's rows are never looked up again by id), with their template.
  const base = (window?: number) => {
    const from =
      window === undefined
        ? scoped(db.selectFrom('documents'))
        : (db.selectFrom(
            scoped(db.selectFrom('documents').selectAll('documents'))
              .orderBy('documents.created_at', 'desc')
              .orderBy('documents.id', 'desc')
              .limit(window)
              .as('documents'),
          ) as unknown as SelectQueryBuilder<Database, 'documents', object>);
    return from
      .leftJoin('templates', 'templates.id', 'documents.template_id')
      .leftJoin('template_instances', 'template_instances.document_id', 'documents.id')
      .select([
        'documents.id',
        'documents.title',
        'documents.status',
        'documents.created_at',
        'documents.completed_at',
        'documents.template_id',
        'documents.template_version',
        'templates.name as template_name',
        'template_instances.id as instance_id',
        'template_instances.status as instance_status',
      ]);
  };
  // The creation times of the scope's newest document, of the last one a search walk reads, and of its oldest.
  const scopeEdges = async () => {
    const at = (order: 'asc' | 'desc', offset: number) =>
      scoped(db.selectFrom('documents'))
        .select('documents.created_at')
        .orderBy('documents.created_at', order)
        .orderBy('documents.id', order)
        .limit(1)
        .offset(offset)
        .executeTakeFirst();
    const oldest = await at('asc', 0);
    if (!oldest) return null;
    const newest = (await at('desc', 0))!.created_at;
    return { newest, boundary: (await at('desc', walkRows - 1))?.created_at, oldest: oldest.created_at };
  };
  const page = (q: ReturnType<typeof base>) =>
    q.orderBy('documents.created_at', 'desc').orderBy('documents.id', 'desc').limit(o.limit).execute();
  const byId = (search: string) => db.selectNoFrom(sql<string>`${search}`.as('document_id'));
  // FTS5 (migration 025: row ids in creation order): the window starts at the creation millisecond of the n-th newest
  // match in any workspace (read from the index's row ids alone), n 4 pages' worth, growing 4 times a step; its candidates are the
  // matches from that millisecond on; a window back to the scope's oldest document is the last. Cost: the matches
  // newer than the page's last document.
  const ftsWindows = async (search: string, oldest: number) => {
    const match = sql<boolean>`s.document_search match ${`"${search.replace(/"/g, '""')}"`}`;
    const below = o.before ? sql<boolean>`s.rowid < ${rowAt(o.before.createdAt + 1)}` : sql<boolean>`true`;
    for (let n = 4 * o.limit; ; n *= 4) {
      const nth = await db
        .selectFrom(sql.table('document_search').as('s'))
        .select(sql<number>`s.rowid / ${sql.lit(SEARCH_ROWS_PER_MS)}`.as('ms'))
        .where(match)
        .where(below)
        .orderBy(sql`s.rowid`, 'desc')
        .limit(1)
        .offset(n - 1)
        .executeTakeFirst();
      const candidates = db
        .selectFrom(sql.table('document_search').as('s'))
        .select(sql<string>`s.document_id`.as('document_id'))
        .where(match)
        .where(below)
        .$if(!!nth, (q) => q.where(sql<boolean>`s.rowid >= ${rowAt(nth!.ms)}`))
        .unionAll(byId(search));
      const got = await page(base().where('documents.id', 'in', candidates));
      if (!nth || nth.ms <= oldest || got.length >= o.limit) return got;
    }
  };
  let docs: Awaited<ReturnType<typeof page>>;
  if (!o.search) docs = await page(base());
  else {
    const search = o.search;
    const pattern = likeContains(search);
    const contains = (column: string) => sql<boolean>`lower(${sql.ref(column)}) like lower(${pattern}) escape '!'`;
    const walk = (q: ReturnType<typeof base>) =>
      q.where((eb) =>
        eb.or([
          contains('documents.title'),
          eb('documents.id', '=', search),
          // Per row, by the document's own requests: the OFFSET keeps PostgreSQL from turning this into a hashed
          // set of every request in the database whose e-mail matches (a cost that grows with the whole history).
          eb.exists(
            eb
              .selectFrom('signing_requests')
              .select(sql.lit(1).as('one'))
              .whereRef('signing_requests.document_id', '=', 'documents.id')
              .where(contains('signing_requests.email'))
              .limit(1)
              .offset(0),
          ),
        ]),
      );
    if (o.textIndex && trigramSearchable(search)) {
      // A common term fills a page among the newest documents: look there first, a bounded walk (the newest
      // SEARCH_WALK_ROWS of the list, by its index). Only a rarer term goes to the text index, whose cost is the
      // term's matches in every workspace within the window of time asked. The page is the same either way: the
      // walk's matches are newer than any outside it.
      docs = await page(walk(base(walkRows)));
      // On PostgreSQL, fewer documents in the scope than the walk read: it saw them all. Otherwise the text index is
      // read newest first: on SQLite in windows of FTS5 row ids (ftsWindows), on PostgreSQL by periods and days of
      // 026's time-keyed pieces (document-search.repo.ts). Either way a term common in the history but absent from
      // the newest documents does not bring every match at once.
      const edges = docs.length < o.limit ? await scopeEdges() : null;
      // SQLite's walk folds ASCII case only (its lower), FTS5 all of Unicode: its index is asked even after a walk
      // of the whole scope, up to the scope's oldest document.
      if (edges && o.textIndex === 'fts5') docs = await ftsWindows(search, edges.oldest);
      else if (edges?.boundary !== undefined) {
        const ids = await keyWindows(db, { ...o, search, contains }, scoped, edges);
        docs = ids.length ? await page(base().where('documents.id', 'in', ids)) : [];
      }
    } else docs = await page(walk(base()));
  }
  const requests = docs.length
    ? await db
        .selectFrom('signing_requests')
        .select(['document_id', 'email', 'phone', 'name', 'status'])
        .where(
          'document_id',
          'in',
          docs.map((d) => d.id),
        )
        .orderBy('document_id')
        .orderBy('slot')
        .execute()
    : [];
  return docs.map((d) => ({
    ...d,
    status: d.status as DocumentStatus,
    template_id: d.template_id ?? null,
    template_version: d.template_version ?? null,
    signers: requests
      .filter((r) => r.document_id === d.id)
      .map((r) => ({ email: r.email, phone: r.phone ?? null, name: r.name, status: r.status as RequestStatus })),
  }));
}
