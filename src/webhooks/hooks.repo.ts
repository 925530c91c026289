import type { CompiledQuery, Kysely } from 'kysely';
import { changeProbe } from '../db/db.js';
import type { Database, HooksTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import { iso } from '../lib/clock.js';
import { newWebhookSecret } from './signature.js';

export type Hook = HooksTable;

/** Creates a hook; the returned secret is the only time it leaves the service. */
export async function createHook(
  db: Kysely<Database>,
  input: { workspaceId: string; targetUrl: string; events: string[]; documentId?: string | null; source: 'api' | 'callback' | 'dashboard' },
  now: number,
): Promise<Hook> {
  const hook: Hook = {
    id: newId('hook'),
    workspace_id: input.workspaceId,
    target_url: input.targetUrl,
    events: JSON.stringify(input.events),
    secret: newWebhookSecret(),
    document_id: input.documentId ?? null,
    source: input.source,
    created_at: now,
    deleted_at: null,
  };
  await db.insertInto('hooks').values(hook).execute();
  return hook;
}

// Compiled once per Kysely instance (dialect-correct placeholders): GET /v1/hooks is hot and its SQL never varies.
const listQueries = new WeakMap<Kysely<Database>, CompiledQuery<Hook>>();

export const HOOK_LIST_CACHE_SIZE = 1000;

// On SQLite the lists are also kept per workspace, and used only while the change probe shows that nothing at all
// was written to the database since just before they were read (by any connection or process, this one included).
type CachedList = { rows: readonly Hook[]; version: number };
// Cached rows are frozen and shared, so their wire views can be built once too (null: not built yet).
const sharedViews = new WeakMap<Hook, Readonly<Record<string, unknown>> | null>();
const listCaches = new WeakMap<Kysely<Database>, Map<string, CachedList>>();

async function readHooks(db: Kysely<Database>, workspaceId: string): Promise<Hook[]> {
  let q = listQueries.get(db);
  if (q === undefined) {
    q = db
      .selectFrom('hooks')
      .selectAll()
      .where('workspace_id', '=', '')
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .compile();
    if (q.parameters.length !== 1) throw new Error('listHooks: expected exactly one parameter');
    listQueries.set(db, q);
  }
  const r = await db.executeQuery<Hook>({ query: q.query, queryId: q.queryId, sql: q.sql, parameters: [workspaceId] });
  return r.rows;
}

/**
 * The workspace's live hooks, oldest first. The rows may be shared with other callers: do not modify them.
 * `version`: a change-probe reading already taken for this request (`req.dataVersion`); by default, a fresh one.
 */
export async function listHooks(db: Kysely<Database>, workspaceId: string, version = changeProbe(db)?.version() ?? null): Promise<Hook[]> {
  const hit = cachedHooks(db, workspaceId, version);
  if (hit !== undefined) return [...hit];
  const rows = await readHooks(db, workspaceId);
  if (version === null) return rows;
  let cache = listCaches.get(db);
  if (cache === undefined) listCaches.set(db, (cache = new Map()));
  for (const r of rows) sharedViews.set(Object.freeze(r), null);
  cache.delete(workspaceId);
  if (cache.size >= HOOK_LIST_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(workspaceId, { rows, version });
  return [...rows];
}

/** listHooks' answer without touching the database, when it is cached and still exact at `version`; else undefined. */
export function cachedHooks(db: Kysely<Database>, workspaceId: string, version: number | null): readonly Hook[] | undefined {
  if (version === null) return undefined;
  const hit = listCaches.get(db)?.get(workspaceId);
  return hit !== undefined && hit.version === version ? hit.rows : undefined;
}

export const findHook = (db: Kysely<Database>, workspaceId: string, id: string) =>
  db
    .selectFrom('hooks')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();

export const findHookAnyWorkspace = (db: Kysely<Database>, id: string) =>
  db.selectFrom('hooks').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();

/** Soft delete: past deliveries keep their hook row for the history; pending ones stop (the dispatcher skips them). */
export async function deleteHook(db: Kysely<Database>, workspaceId: string, id: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('hooks')
    .set({ deleted_at: now })
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The wire view of a hook; `secret` only when `withSecret` (creation). Views of listHooks' shared rows are shared. */
export function presentHook(h: Hook, withSecret = false) {
  if (!withSecret) {
    const shared = sharedViews.get(h);
    if (shared) return shared;
    if (shared === null) {
      const view = buildView(h);
      Object.freeze(view.events);
      sharedViews.set(h, Object.freeze(view));
      return view;
    }
  }
  const out = buildView(h);
  if (withSecret) out.secret = h.secret;
  return out;
}

function buildView(h: Hook): Record<string, unknown> {
  return {
    id: h.id,
    target_url: h.target_url,
    events: JSON.parse(h.events) as string[],
    created_at: iso(h.created_at),
    document_id: h.document_id,
  };
}
