// All SQL of embedded signing sessions. A session row never changes: it ends by its own expiry or with its request.
import type { Kysely } from 'kysely';
import type { Database, EmbedSessionsTable } from '../db/schema.js';

export type SessionRow = EmbedSessionsTable;

export const insertSession = (db: Kysely<Database>, row: SessionRow) =>
  db.insertInto('embed_sessions').values(row).execute();

export const findSessionByTokenHash = (db: Kysely<Database>, tokenHash: string) =>
  db.selectFrom('embed_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();

/** Sessions that ended before `before`: nothing can open them any more. */
export async function deleteEndedSessions(db: Kysely<Database>, before: number): Promise<number> {
  const r = await db.deleteFrom('embed_sessions').where('expires_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
