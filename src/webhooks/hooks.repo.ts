// All SQL for hook rows. A hook's secret leaves only at creation. It is stored encrypted under the keyring, with the
// hook's id as authenticated data (hook-secrets.ts opens it for signing), or plain without a keyring.
import type { Kysely } from 'kysely';
import { encryptSecret, type Keyring } from '../lib/secret-box.js';
import type { Database, HooksTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import { newWebhookSecret } from './signature.js';

export type Hook = HooksTable;

/** Creates a hook; the returned secret (in clear) is the only time it leaves the service. */
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
  keyring: Keyring | null = null,
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
  const stored = keyring ? encryptSecret(keyring, 'hook-secret', hook.id, hook.secret) : hook.secret;
  await db
    .insertInto('hooks')
    .values({ ...hook, secret: stored })
    .execute();
  return hook;
}

/**
 * The workspace's live hooks, oldest first. `workspaceWide`: only those of no document (not a `callback_url` hook),
 * the dashboard's list, which stays as long as the hooks someone registered however many documents are sent (index
 * hooks_workspace_document).
 */
export const listHooks = (
  db: Kysely<Database>,
  workspaceId: string,
  o: { workspaceWide?: boolean } = {},
): Promise<Hook[]> => {
  let q = db.selectFrom('hooks').selectAll().where('workspace_id', '=', workspaceId);
  if (o.workspaceWide) q = q.where('document_id', 'is', null);
  return q.where('deleted_at', 'is', null).orderBy('created_at').orderBy('id').execute();
};

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

/** Every hook's stored secret not written under key `keyId` (plain, or under another key), deleted hooks too. */
export const secretsNotUnder = (db: Kysely<Database>, keyId: string) =>
  db
    .selectFrom('hooks')
    .select(['id', 'secret'])
    .where('secret', 'not like', `enc:v1:${keyId}:%`)
    .orderBy('id')
    .execute();

/** Replaces a stored secret only if it is still `from` (another process may have rewritten it first). */
export async function replaceSecret(db: Kysely<Database>, id: string, from: string, to: string): Promise<boolean> {
  const r = await db
    .updateTable('hooks')
    .set({ secret: to })
    .where('id', '=', id)
    .where('secret', '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Whether any hook's secret is stored encrypted. */
export const anyEncryptedSecret = async (db: Kysely<Database>): Promise<boolean> =>
  (await db.selectFrom('hooks').select('id').where('secret', 'like', 'enc:%').limit(1).executeTakeFirst()) !==
  undefined;
