// SQL of signer verification (migration 011): the codes sent to a signer and the request's verified flag.
import type { Kysely } from 'kysely';
import type { Database, SignerCodesTable } from '../db/schema.js';

type Trx = Kysely<Database>;
export type CodeRow = SignerCodesTable;

export const insertCode = (trx: Trx, row: CodeRow) => trx.insertInto('signer_codes').values(row).execute();

/** The newest code sent to a signing request. */
export const latestCode = (db: Trx, requestId: string) =>
  db
    .selectFrom('signer_codes')
    .selectAll()
    .where('signing_request_id', '=', requestId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();

/** Codes sent to a request in all, and since `since` (the send limit). */
export async function countSends(db: Trx, requestId: string, since: number): Promise<{ all: number; recent: number }> {
  const rows = await db
    .selectFrom('signer_codes')
    .select(['created_at'])
    .where('signing_request_id', '=', requestId)
    .execute();
  return { all: rows.length, recent: rows.filter((r) => Number(r.created_at) > since).length };
}

/** The oldest send inside the window: when it leaves the window, one more may be sent. */
export const oldestSendSince = async (db: Trx, requestId: string, since: number) =>
  (
    await db
      .selectFrom('signer_codes')
      .select(['created_at'])
      .where('signing_request_id', '=', requestId)
      .where('created_at', '>', since)
      .orderBy('created_at', 'asc')
      .limit(1)
      .executeTakeFirst()
  )?.created_at;

/** One more wrong try, only while the code is unused and its count is what the caller read. */
export const countWrongTry = (trx: Trx, id: string, tries: number) =>
  trx
    .updateTable('signer_codes')
    .set({ tries: tries + 1 })
    .where('id', '=', id)
    .where('tries', '=', tries)
    .where('used_at', 'is', null)
    .executeTakeFirst();

export const markCodeUsed = (trx: Trx, id: string, now: number) =>
  trx.updateTable('signer_codes').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).execute();

export const markVerified = (trx: Trx, requestId: string, now: number) =>
  trx
    .updateTable('signing_requests')
    .set({ verified_at: now, updated_at: now })
    .where('id', '=', requestId)
    .where('verified_at', 'is', null)
    .execute();
