// Purge of an ended document: DELETE /v1/documents/{id}, the dashboard's "Delete permanently", and the hourly
// purge-documents job for workspaces with a retention. Guarantees:
// - One transaction, with the document row locked: its personal rows go (purge.repo.ts), its tombstone (id, hashes,
//   completion and purge times) and an audit_log row are written, and its blobs are queued for deletion; all or
//   nothing. Blobs are deleted after the commit (nothing references them then), and a deletion that did not happen
//   (crash, I/O error) stays queued until the job's next run deletes it: no blob is orphaned for good and no row
//   points at a missing blob.
// - Idempotent: a purged document answers with its tombstone, and nothing more is done; a document that has not
//   ended is refused (409 document_not_ended); another workspace's or an unknown id is 404 not_found.
// - A webhook worker's record or a replay of the document's deliveries that commits between the purge's statements
//   (PostgreSQL) is waited for (purge.repo.ts); one that still overtakes it makes it run again (db/retry-races.ts).
// - Concurrent purgers purge each document once: the row lock (PostgreSQL; SQLite has one writer), and the job's
//   claims skip documents another purger holds.
import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit-log.repo.js';
import type { Db } from '../db/db.js';
import { migrationApplied } from '../db/migrate.js';
import { retryingRaces } from '../db/retry-races.js';
import { migrationGate } from '../http/feature-gate.js';
import type { Database, DocumentTombstonesTable } from '../db/schema.js';
import { drainBlobDeletions } from '../documents/blob-deletions.js';
import { queueBlobDeletions } from '../documents/blob-deletions.repo.js';
import type { BlobStore } from '../documents/blob-store.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { iso, type Clock } from '../lib/clock.js';
import { apiError } from '../lib/errors.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { PURGE_BATCH_DOCUMENTS } from '../limits.js';
import {
  deleteDocumentRows,
  documentBlobs,
  documentsEndedBy,
  findTombstone,
  insertTombstone,
  lastAuditHash,
  retentionCutoff,
  workspacesWithRetention,
} from './purge.repo.js';
import { lockDocument, type DocumentRow } from './signing.repo.js';
import { isEndedDocument } from './states.js';
import type { PurgedOut } from './purge.schemas.js';

export type PurgeDeps = { db: Db; clock: Clock; blobs: BlobStore; logger?: Logger };
type Trx = Kysely<Database>;

/** The answer of a purge, first or repeated: the tombstone on the wire. */
export function presentPurged(t: DocumentTombstonesTable): PurgedOut {
  const at = (ms: number | null) => (ms === null ? null : iso(Number(ms)));
  return {
    id: t.id,
    status: 'purged',
    ended_status: t.status,
    original_sha256: t.original_sha256,
    signed_sha256: t.signed_sha256,
    audit_last_hash: t.audit_last_hash,
    completed_at: at(t.completed_at),
    ended_at: at(t.ended_at),
    purged_at: iso(Number(t.purged_at)),
  };
}

/** Purges one locked, ended document; returns its tombstone and the blob keys queued. */
async function purgeLocked(
  trx: Trx,
  doc: DocumentRow,
  o: { actor: string; reason: 'request' | 'retention'; now: number; db: Db; deliveryQueue: boolean },
): Promise<{ tombstone: DocumentTombstonesTable; keys: string[] }> {
  const keys = await documentBlobs(trx, doc);
  const tombstone: DocumentTombstonesTable = {
    id: doc.id,
    workspace_id: doc.workspace_id,
    status: doc.status,
    original_sha256: doc.original_sha256,
    signed_sha256: doc.signed_sha256,
    seal_revision_sha256: doc.seal_revision_sha256 ?? null,
    audit_last_hash: await lastAuditHash(trx, doc.id),
    completed_at: doc.completed_at,
    ended_at: doc.completed_at ?? doc.closed_at ?? doc.updated_at,
    purged_at: o.now,
  };
  await deleteDocumentRows(trx, doc, o.now, o);
  await insertTombstone(trx, tombstone);
  await queueBlobDeletions(trx, keys, o.now);
  const detail = { reason: o.reason, ended_status: doc.status };
  await recordAudit(
    trx,
    { workspaceId: doc.workspace_id, actor: o.actor, action: 'document.purged', targetId: doc.id, detail },
    o.now,
  );
  return { tombstone, keys };
}

/** Deletes the blobs a purge queued, now; what fails stays queued for the job. */
async function deleteBlobsNow(deps: PurgeDeps, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await drainBlobDeletions(deps.db, deps.clock, deps.blobs, { keys, logger: deps.logger }).catch((err: unknown) =>
    (deps.logger ?? silentLogger).error({ err: String(err) }, 'blob deletion after purge failed; the job retries'),
  );
}

/** Purges the workspace's ended document `id` (see the guarantees above); `actor` as in the audit log. */
export async function purgeDocument(
  deps: PurgeDeps,
  o: { workspaceId: string; id: string; actor: string },
): Promise<PurgedOut> {
  const deliveryQueue = await migrationGate(deps.db, '028-delivery-queue').available();
  const r = await retryingRaces(() =>
    deps.db.kysely.transaction().execute(async (trx) => {
      const doc = await lockDocument(deps.db, trx, o.id);
      if (!doc || doc.workspace_id !== o.workspaceId) {
        const tombstone = await findTombstone(trx, o.workspaceId, o.id);
        if (!tombstone) throw apiError('not_found');
        return { tombstone, keys: [] };
      }
      if (!isEndedDocument(doc.status)) throw apiError('document_not_ended', { meta: { status: doc.status } });
      const now = deps.clock.now();
      return purgeLocked(trx, doc, { actor: o.actor, reason: 'request', now, db: deps.db, deliveryQueue });
    }),
  );
  await deleteBlobsNow(deps, r.keys);
  return presentPurged(r.tombstone);
}

/**
 * Hourly: first the blob deletions still queued, then every ended document past its workspace's retention, in
 * transactions of at most PURGE_BATCH_DOCUMENTS documents.
 */
export function purgeDocumentsJob(deps: PurgeDeps, batch = PURGE_BATCH_DOCUMENTS): ScheduledJob {
  return {
    everyMs: 3600_000,
    async run() {
      if (!(await migrationApplied(deps.db, '021-purge'))) return { purged: 0 };
      const deliveryQueue = await migrationGate(deps.db, '028-delivery-queue').available();
      const earlier = await drainBlobDeletions(deps.db, deps.clock, deps.blobs, { logger: deps.logger });
      let purged = 0;
      const now = deps.clock.now();
      for (const ws of await workspacesWithRetention(deps.db.kysely)) {
        for (;;) {
          const r = await retryingRaces(() =>
            deps.db.kysely.transaction().execute(async (trx) => {
              const ids = await documentsEndedBy(deps.db, trx, ws.id, retentionCutoff(now, ws.days), batch);
              const keys: string[] = [];
              let n = 0;
              for (const id of ids) {
                const doc = await lockDocument(deps.db, trx, id);
                if (!doc || !isEndedDocument(doc.status)) continue;
                const actor = 'system:retention';
                const purged = await purgeLocked(trx, doc, {
                  actor,
                  reason: 'retention',
                  now,
                  db: deps.db,
                  deliveryQueue,
                });
                keys.push(...purged.keys);
                n++;
              }
              return { claimed: ids.length, n, keys };
            }),
          );
          purged += r.n;
          await deleteBlobsNow(deps, r.keys);
          if (r.claimed < batch) break;
        }
      }
      return { purged, blobs_deleted_earlier: earlier.deleted, blobs_failed_earlier: earlier.failed };
    },
  };
}
