// The documents a verified file can be: the one whose seal revision (a prefix of every copy, renewed ones
// included) or whose current signed file has one of the given hashes; or, once purged, its tombstone.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export type SealedDocument = {
  id: string;
  /** The workspace it was sent from: whose brand the /verify page shows (null for a tombstone). */
  workspace_id: string | null;
  title: string;
  completed_at: number | null;
  status: string;
  /** Set when only its tombstone is left (migration 021). */
  purged_at: number | null;
};

/** The hash match both tables share: the current signed file, or one of the seal revisions. */
const sealedAs =
  (revisionHashes: string[], fileSha256: string) =>
  (eb: ExpressionBuilder<Database, 'documents'> | ExpressionBuilder<Database, 'document_tombstones'>) => {
    const b = eb as ExpressionBuilder<Database, 'documents'>;
    return b.or([
      b('signed_sha256', '=', fileSha256),
      ...(revisionHashes.length ? [b('seal_revision_sha256', 'in', revisionHashes)] : []),
    ]);
  };

export async function findSealedDocument(
  db: Kysely<Database>,
  revisionHashes: string[],
  fileSha256: string,
): Promise<SealedDocument | null> {
  const matches = sealedAs(revisionHashes.filter(Boolean), fileSha256);
  const row = await db
    .selectFrom('documents')
    .select(['id', 'workspace_id', 'title', 'completed_at', 'status'])
    .where(matches)
    .where('status', '=', 'completed')
    .orderBy('completed_at', 'asc')
    .executeTakeFirst();
  if (row) return { ...row, purged_at: null };
  const tomb = await db
    .selectFrom('document_tombstones')
    .select(['id', 'completed_at', 'status', 'purged_at'])
    .where(matches)
    .where('status', '=', 'completed')
    .orderBy('completed_at', 'asc')
    .executeTakeFirst();
  return tomb ? { ...tomb, workspace_id: null, title: '' } : null;
}
