import type { Generated } from 'kysely';

/** What a purged document leaves (migration 021): its id, hashes and times, nothing personal. */
export type DocumentTombstonesTable = {
  id: string;
  workspace_id: string;
  /** The status it ended in. */
  status: string;
  original_sha256: string;
  signed_sha256: string | null;
  seal_revision_sha256: string | null;
  /** The hash of the last entry of its audit chain. */
  audit_last_hash: string | null;
  completed_at: number | null;
  ended_at: number | null;
  purged_at: number;
};

/** Blobs to delete once the transaction that stopped referencing them committed (migration 021). */
export type BlobDeletionsTable = {
  key: string;
  created_at: number;
  attempts: Generated<number>;
  last_error: string | null;
};
