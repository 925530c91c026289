// All SQL of the signer's copy: the download links mailed on completion (migration 010), by token hash only.
import { sql, type Kysely } from 'kysely';
import type { Database, SignerCopiesTable } from '../db/schema.js';

type Trx = Kysely<Database>;
export type CopyRow = SignerCopiesTable;

export async function insertCopy(trx: Trx, row: CopyRow): Promise<void> {
  await trx.insertInto('signer_copies').values(row).execute();
}

export const findCopyByTokenHash = async (db: Trx, tokenHash: string): Promise<CopyRow | undefined> =>
  db.selectFrom('signer_copies').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();

/**
 * Whether migration 010 has run, read in the caller's transaction (on SQLite a read beside an open transaction
 * would wait for it). A server started with SIGNET_AUTO_MIGRATE=0 on an older schema must still complete documents.
 */
export async function copiesMigrated(trx: Trx): Promise<boolean> {
  const r = await sql<{
    n: number | string;
  }>`select count(*) as n from kysely_migration where name = ${'010-signer-copies'}`.execute(trx);
  return Number(r.rows[0]?.n ?? 0) > 0;
}
