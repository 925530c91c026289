// Blobs nothing names: left by a process that died between writing a blob file and committing its transaction (a
// rollback removes its files itself, blob-store.ts), or an editor upload never published. Guarantees:
// - A blob younger than BLOB_ORPHAN_GRACE_MS is never touched, so a transaction still open or an upload still in a
//   form keeps its blob.
// - A blob named by any `*_blob` column is never deleted: what is unnamed is read in one statement (one snapshot), and
//   a blob unnamed past the grace is never named later (keys are made by `put` and named in its transaction; a
//   draft's blob is named by the draft until its document names it, in one transaction).
// - Orphans go through the deletion queue (blob-deletions.ts), so a crash mid-sweep repeats work and loses none.
// - The cost is one pass over the store's listing and one over each table with a blob column, whatever the number
//   of blobs, and no write lock but for queueing the orphans found.
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { BLOB_ORPHAN_GRACE_MS } from '../limits.js';
import type { BlobStore } from './blob-store.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { migrationApplied } from '../db/migrate.js';
import { drainBlobDeletions } from './blob-deletions.js';
import {
  addCandidates,
  blobColumns,
  createCandidates,
  dropCandidates,
  unnamedCandidates,
} from './blob-orphans.repo.js';
import { queueBlobDeletions } from './blob-deletions.repo.js';

const INSERT_BATCH = 500;
/** Orphans one sweep deletes at most; the next run takes the rest. */
const MAX_SWEEP = 100_000;

/**
 * Finds the blobs older than the grace that nothing names; with `remove`, queues and deletes them. Returns the keys
 * found (at most `limit`, for reports) and how many were deleted.
 */
export async function sweepOrphanBlobs(
  db: Db,
  clock: Clock,
  blobs: BlobStore,
  o: { remove: boolean; limit?: number },
): Promise<{ checked: number; orphans: string[]; deleted: number }> {
  const before = clock.now() - BLOB_ORPHAN_GRACE_MS;
  const columns = await blobColumns(db.kysely);
  // A temporary table belongs to one connection: the whole check runs on one (PostgreSQL's pool has many).
  const found = await db.kysely.connection().execute(async (conn) => {
    await createCandidates(conn);
    try {
      let checked = 0;
      let batch: string[] = [];
      for await (const key of blobs.list(before)) {
        batch.push(key);
        if (batch.length === INSERT_BATCH) {
          await addCandidates(conn, batch);
          checked += batch.length;
          batch = [];
        }
      }
      await addCandidates(conn, batch);
      checked += batch.length;
      const orphans = await unnamedCandidates(db, conn, columns, o.remove ? MAX_SWEEP : (o.limit ?? 1000));
      return { checked, orphans };
    } finally {
      await dropCandidates(conn);
    }
  });
  // After the pinned connection is given back: on SQLite it is the only one, and the drain needs it.
  let deleted = 0;
  if (o.remove && found.orphans.length) {
    await queueBlobDeletions(db.kysely, found.orphans, clock.now());
    deleted = (await drainBlobDeletions(db, clock, blobs, { keys: found.orphans })).deleted;
  }
  return { checked: found.checked, orphans: found.orphans.slice(0, o.limit ?? 1000), deleted };
}

/** The daily job: deletes orphans past the grace (`signet jobs run sweep-orphan-blobs` runs it at once). */
export const sweepOrphanBlobsJob = (deps: { db: Db; clock: Clock; blobs: BlobStore }): ScheduledJob => ({
  everyMs: 24 * 3600_000,
  async run() {
    if (!(await migrationApplied(deps.db, '021-purge'))) return { deleted: 0 };
    const r = await sweepOrphanBlobs(deps.db, deps.clock, deps.blobs, { remove: true, limit: 20 });
    return { checked: r.checked, deleted: r.deleted, orphans: r.orphans };
  },
});
