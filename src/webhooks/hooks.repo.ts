// All SQL for hook rows. A hook's secret is stored as it is (signing needs it) and leaves only at creation.
import type { Kysely } from 'kysely';
import type { Database, HooksTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import { newWebhookSecret } from './signature.js';

export type Hook = HooksTable;

/** Creates a hook; the returned secret is the only time it leaves the service. */
export async function createHook(
  db: Kysely<Database>,
  input: {
    workspaceId: string;
    targetUrl: string;
    events: string[];
    documentId?: string | null;
    source: 'api' | 'callback' | 'dashboard';
  },
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

/** The workspace's live hooks, oldest first. */
export const listHooks = (db: Kysely<Database>, workspaceId: string): Promise<Hook[]> =>
  db
    .selectFrom('hooks')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

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

/** Whether the hook is gone (deleted, or no such row): the dispatcher asks just before it sends. */
export const isHookGone = async (db: Kysely<Database>, id: string): Promise<boolean> =>
  (await db.selectFrom('hooks').select('deleted_at').where('id', '=', id).executeTakeFirst())?.deleted_at !== null;

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
