// SQL of the dashboard's drafts (migration 015): every read and write is scoped to one workspace, so a draft id of
// another workspace reads as absent.
import type { Kysely, Selectable } from 'kysely';
import type { Database, DashboardDraftsTable } from '../db/schema.js';

export type DraftRow = Selectable<DashboardDraftsTable>;
type Q = Kysely<Database>;

export const insertDraft = (db: Q, row: DraftRow) => db.insertInto('dashboard_drafts').values(row).execute();

export const findDraft = (db: Q, workspaceId: string, id: string): Promise<DraftRow | undefined> =>
  db
    .selectFrom('dashboard_drafts')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();

/** The workspace's drafts, last changed first (no PDF, no fields: the list shows names and dates). */
export const listDrafts = (db: Q, workspaceId: string, limit: number) =>
  db
    .selectFrom('dashboard_drafts')
    .innerJoin('users', 'users.id', 'dashboard_drafts.created_by')
    .select([
      'dashboard_drafts.id',
      'dashboard_drafts.file_name',
      'dashboard_drafts.form',
      'dashboard_drafts.created_at',
      'dashboard_drafts.updated_at',
      'users.email as created_by_email',
    ])
    .where('dashboard_drafts.workspace_id', '=', workspaceId)
    .orderBy('dashboard_drafts.updated_at', 'desc')
    .orderBy('dashboard_drafts.id', 'desc')
    .limit(limit)
    .execute();

/** true: the draft was there and now has this form and these fields. */
export async function saveDraft(
  db: Q,
  workspaceId: string,
  id: string,
  set: { form: string; fields: string; updated_at: number },
): Promise<boolean> {
  const r = await db
    .updateTable('dashboard_drafts')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** true: the draft was there and is gone. (Its PDF blob stays, like every blob: the store has no delete.) */
export async function deleteDraft(db: Q, workspaceId: string, id: string): Promise<boolean> {
  const r = await db
    .deleteFrom('dashboard_drafts')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
