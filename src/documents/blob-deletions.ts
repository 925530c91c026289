// Draining the blob deletion queue. Guarantees: a queued key is deleted from the blob store first and forgotten
// after, so a crash in between only repeats a deletion (deleting a missing blob is no error); a failed deletion
// stays queued with its error and is tried again by the next drain. Two drains at once may both delete a key: harmless.
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { describeError, silentLogger, type Logger } from '../lib/logger.js';
import type { BlobStore } from './blob-store.js';
import { forgetBlobDeletions, queuedBlobDeletions, recordBlobDeletionFailure } from './blob-deletions.repo.js';

const DRAIN_BATCH = 100;

/** Deletes queued blobs (only `keys` when given), batch by batch, until none is left or a batch fails entirely. */
export async function drainBlobDeletions(
  db: Db,
  clock: Clock,
  blobs: BlobStore,
  o: { keys?: readonly string[]; logger?: Logger } = {},
): Promise<{ deleted: number; failed: number }> {
  const out = { deleted: 0, failed: 0 };
  const failedKeys = new Set<string>();
  for (;;) {
    const batch = (await queuedBlobDeletions(db.kysely, clock.now(), DRAIN_BATCH + failedKeys.size, o.keys)).filter(
      (k) => !failedKeys.has(k),
    );
    if (batch.length === 0) return out;
    const done: string[] = [];
    for (const key of batch) {
      try {
        await blobs.delete(key);
        done.push(key);
      } catch (err) {
        failedKeys.add(key);
        out.failed++;
        const error = describeError(err);
        (o.logger ?? silentLogger).error({ err: error }, 'blob deletion failed; retried later');
        await recordBlobDeletionFailure(db.kysely, key, error);
      }
    }
    await forgetBlobDeletions(db.kysely, done);
    out.deleted += done.length;
    if (done.length === 0) return out;
  }
}
