// The operator audit log (`audit_log`): who changed what in a workspace (keys, hooks, people, documents) from the
// dashboard or the CLI. Callers pass the acting transaction, so a row exists exactly when its action committed.
// Not the per-document hash chain (documents/audit.repo.ts), which is evidence about one signing.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** One row: `actor` is `user:<email>` (the dashboard) or `cli:<login>`; `detail` is stored as JSON. */
export type AuditRow = {
  workspaceId: string;
  actor: string;
  action: string;
  targetId?: string | null;
  detail?: unknown;
};

export async function recordAudit(db: Kysely<Database>, entry: AuditRow, now: number): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      workspace_id: entry.workspaceId,
      actor: entry.actor,
      action: entry.action,
      target_id: entry.targetId ?? null,
      detail: entry.detail === undefined ? null : JSON.stringify(entry.detail),
      created_at: now,
    })
    .execute();
}

/** A workspace's audit log, newest first, a page at a time (keyset on the row id). */
export const listAudit = (db: Kysely<Database>, workspaceId: string, o: { beforeId?: number; limit: number }) => {
  let q = db.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId);
  if (o.beforeId !== undefined) q = q.where('id', '<', o.beforeId);
  return q.orderBy('id', 'desc').limit(o.limit).execute();
};
