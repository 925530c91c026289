// All SQL of embedded signing sessions. A session row never changes: it ends by its own expiry or with its request.
import type { Kysely } from 'kysely';
import type { Database, EmbedSessionsTable } from '../db/schema.js';
import type { PruneTarget } from '../jobs/prune.repo.js';

export type SessionRow = EmbedSessionsTable;

export const insertSession = (db: Kysely<Database>, row: SessionRow) =>
  db.insertInto('embed_sessions').values(row).execute();

export const findSessionByTokenHash = (db: Kysely<Database>, tokenHash: string) =>
  db.selectFrom('embed_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();

/** Sessions that ended before the cutoff: nothing can open them any more. */
export const EMBED_SESSIONS_PRUNE: PruneTarget<'embed_sessions'> = {
  table: 'embed_sessions',
  key: ['id'],
  order: 'expires_at',
  expired: (eb, cutoff) => eb('embed_sessions.expires_at', '<', cutoff),
};
