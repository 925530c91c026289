// SQL of qualified signatures (migration 013): ceremonies (one row per OAuth round trip), the per-document lock
// that serializes qualified signers, and the document's current qualified revision.
import type { Kysely } from 'kysely';
import type { Database, QesCeremoniesTable } from '../db/schema.js';

type Trx = Kysely<Database>;
export type CeremonyRow = QesCeremoniesTable;

export const insertCeremony = (trx: Trx, row: CeremonyRow) => trx.insertInto('qes_ceremonies').values(row).execute();

export const findCeremony = (db: Trx, id: string) =>
  db.selectFrom('qes_ceremonies').selectAll().where('id', '=', id).executeTakeFirst();

/** Spends a ceremony: true for the one caller that finds it unused and unexpired. */
export const useCeremony = async (trx: Trx, id: string, now: number): Promise<boolean> =>
  Number(
    (
      await trx
        .updateTable('qes_ceremonies')
        .set({ used_at: now })
        .where('id', '=', id)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst()
    ).numUpdatedRows,
  ) > 0;

/** Ends a request's unfinished ceremonies (a new one starts, or the request signed). */
export const endCeremonies = (trx: Trx, requestId: string, now: number) =>
  trx
    .updateTable('qes_ceremonies')
    .set({ used_at: now })
    .where('signing_request_id', '=', requestId)
    .where('used_at', 'is', null)
    .execute();

/** Takes (or renews) the document's qualified-signing lock for `requestId`; false while another signer holds it. */
export const takeQesLock = async (trx: Trx, documentId: string, requestId: string, until: number, now: number) =>
  Number(
    (
      await trx
        .updateTable('documents')
        .set({ qes_lock_request_id: requestId, qes_lock_until: until })
        .where('id', '=', documentId)
        .where((eb) =>
          eb.or([
            eb('qes_lock_request_id', 'is', null),
            eb('qes_lock_request_id', '=', requestId),
            eb('qes_lock_until', '<=', now),
          ]),
        )
        .executeTakeFirst()
    ).numUpdatedRows,
  ) > 0;

export const releaseQesLock = (trx: Trx, documentId: string, requestId: string) =>
  trx
    .updateTable('documents')
    .set({ qes_lock_request_id: null, qes_lock_until: null })
    .where('id', '=', documentId)
    .where('qes_lock_request_id', '=', requestId)
    .execute();

/** The document as it stands after a qualified signer; the lock is released with it. */
export const setQesRevision = (trx: Trx, documentId: string, blob: string, sha256: string, now: number) =>
  trx
    .updateTable('documents')
    .set({ qes_blob: blob, qes_sha256: sha256, qes_lock_request_id: null, qes_lock_until: null, updated_at: now })
    .where('id', '=', documentId)
    .execute();
