// `renew-timestamps`: keeps completed documents verifiable for as long as they are kept. A document is due when its
// last document timestamp's certificate expires within LTV_RENEW_BEFORE_MS, or when that timestamp used an algorithm
// the operator lists as weakening (LTV_WEAK_ALGORITHMS) and the TSA now uses none of them. Renewing appends a DSS
// with fresh validation data for the last timestamp, a new document timestamp and its own validation data
// (documents/pdf/long-term.ts); the earlier bytes stay a prefix, signed_sha256 follows the new file, and the audit
// chain records it. Guarantees: claims go through the one lease mechanism, so several workers (or a `signet jobs
// run` beside them) renew each document once; a failure keeps the claim until a retry time, then any worker retries.
import type { Db } from '../db/db.js';
import { migrationApplied } from '../db/migrate.js';
import { queueBlobDeletions } from '../documents/blob-deletions.repo.js';
import { appendAudit } from '../documents/audit.repo.js';
import type { BlobStore } from '../documents/blob-store.js';
import { renewArchive, type LongTermOptions } from '../documents/pdf/long-term.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { createRunner } from '../jobs/runner.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Clock } from '../lib/clock.js';
import { iso } from '../lib/clock.js';
import { describeError, silentLogger, type Logger } from '../lib/logger.js';
import { LTV_RENEW_BATCH, LTV_RENEW_BEFORE_MS } from '../limits.js';
import { cmsAlgorithms, sha256 } from '../pki/cms.js';
import { claimRenewals, ltvAlgorithms, recordRenewal, releaseRenewal } from './renewal.repo.js';
import { findDocumentById } from './signing.repo.js';

/** What a renewal needs as of now: the TSA, the revocation source, the TSA's issuers and the local CAs. */
export type RenewalTools = LongTermOptions & { anchorsDer: Uint8Array[] };

export type RenewalDeps = {
  db: Db;
  clock: Clock;
  blobs: BlobStore;
  tools: () => Promise<RenewalTools>;
  workerId: string;
  weakAlgorithms: readonly string[];
  logger?: Logger;
};

const LEASE_MS = 5 * 60_000;
const TIMEOUT_MS = 2 * 60_000;
const RETRY_MS = 3600_000;
const DAY_MS = 24 * 3600_000;

export function renewTimestampsJob(deps: RenewalDeps): ScheduledJob {
  const logger = deps.logger ?? silentLogger;
  return {
    everyMs: DAY_MS,
    async run() {
      const tools = await deps.tools();
      const weak = await weakToRenew(deps, tools);
      let renewed = 0;
      let failed = 0;
      const runner = createRunner(
        {
          claim: (o) => claimRenewals(deps.db, weak, { ...o, limit: Math.min(o.limit, LTV_RENEW_BATCH - renewed) }),
          async work({ id }) {
            try {
              if (await renewOne(deps, tools, id)) renewed++;
              return true;
            } catch (err) {
              failed++;
              logger.error({ err: describeError(err), document_id: id }, 'timestamp renewal failed; will retry');
              await releaseRenewal(deps.db, id, deps.workerId, deps.clock.now() + RETRY_MS);
              return false;
            }
          },
          release: async ({ id }) => void (await releaseRenewal(deps.db, id, deps.workerId)),
        },
        {
          name: 'renew-timestamps',
          clock: deps.clock,
          workerId: deps.workerId,
          logger,
          leaseMs: LEASE_MS,
          timeoutMs: TIMEOUT_MS,
          batchSize: 10,
          concurrency: 1,
          pollIntervalMs: 60_000,
        },
      );
      await runner.runOnce();
      await runner.stop();
      return { renewed, failed, weak_algorithms: weak };
    },
  };
}

/** The weakening algorithms worth renewing for: none when the TSA itself still uses one (it would not help). */
async function weakToRenew(deps: RenewalDeps, tools: RenewalTools): Promise<string[]> {
  if (deps.weakAlgorithms.length === 0) return [];
  const probe = await tools.tsa.timestamp(sha256(new TextEncoder().encode('signet renewal probe')));
  const used = cmsAlgorithms(probe.tokenDer);
  const still = used.filter((a) => deps.weakAlgorithms.includes(a));
  if (still.length > 0) {
    (deps.logger ?? silentLogger).warn(
      { weak: still },
      'the TSA still uses algorithms listed as weakening; configure a stronger TSA before renewing for them',
    );
    return [];
  }
  return [...deps.weakAlgorithms];
}

async function renewOne(deps: RenewalDeps, tools: RenewalTools, id: string): Promise<boolean> {
  const doc = await findDocumentById(deps.db.kysely, id);
  if (!doc || doc.status !== 'completed' || !doc.signed_blob) return false;
  const before = await deps.blobs.get(doc.signed_blob);
  const result = await renewArchive(before, tools);
  const signedSha256 = sha256Hex(result.pdf);
  const now = deps.clock.now();
  // Migration 021: the blob no row names any more (the previous file, or this one when the lease was lost or the
  // document purged meanwhile) is queued for deletion with the change, so no older copy outlives a purge.
  const queue = await migrationApplied(deps.db, '021-purge');
  return deps.db.kysely.transaction().execute(async (trx) => {
    const renewed = await deps.blobs.put(result.pdf, 'signed', trx);
    const written = await recordRenewal(trx, id, deps.workerId, {
      signed_blob: renewed,
      signed_sha256: signedSha256,
      ltv_renew_at: result.lastTimestamp!.certNotAfter - LTV_RENEW_BEFORE_MS,
      ltv_algorithms: ltvAlgorithms(result.lastTimestamp!.algorithms),
      updated_at: now,
    });
    if (queue) await queueBlobDeletions(trx, [written ? doc.signed_blob! : renewed], now);
    if (!written) return false;
    await appendAudit(
      trx,
      {
        documentId: id,
        workspaceId: doc.workspace_id,
        action: 'document.timestamp_renewed',
        actor: 'system',
        detail: {
          previous_sha256: doc.signed_sha256,
          signed_sha256: signedSha256,
          renew_by: iso(result.lastTimestamp!.certNotAfter - LTV_RENEW_BEFORE_MS),
          ...(result.note ? { pades_note: result.note } : {}),
        },
      },
      now,
    );
    return true;
  });
}
