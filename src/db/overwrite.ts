// Rewriting values in place so that their old bytes leave the database file (secrets encrypted at rest). SQLite keeps overwritten bytes: a grown cell leaves
// its old bytes as free space on the page, and old page images stay in the WAL until it is checkpointed. So before
// rewriting, freed space is zeroed (secure_delete, for this connection from then on), and after, the WAL is folded
// into the file and emptied. PostgreSQL keeps dead row versions until VACUUM reuses their space (README).
import { sql } from 'kysely';
import type { Db } from './db.js';

/** Call before the rewrite (no transaction open). */
export async function beforeRewrite(db: Db): Promise<void> {
  if (db.dialect === 'sqlite') await sql`PRAGMA secure_delete = ON`.execute(db.kysely);
}

/** Call after the rewrite committed. */
export async function afterRewrite(db: Db): Promise<void> {
  if (db.dialect === 'sqlite') await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db.kysely);
}
