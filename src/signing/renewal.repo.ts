// The renewal job's SQL: which completed documents need a new document timestamp (the last one's certificate nears
// expiry, or its algorithms are configured as weakening), claimed with the one lease mechanism (jobs/lease.repo.ts).
import type { Kysely } from 'kysely';
import type { Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import { claimLeases, writeUnderLease, type Lease } from '../jobs/lease.repo.js';

/** `weak`: algorithm names (as ltv_algorithms lists them) whose timestamps are renewed whatever their expiry. */
export const renewLease = (weak: readonly string[]): Lease<'documents'> => ({
  table: 'documents',
  holder: 'ltv_claimed_by',
  until: 'ltv_claim_expires_at',
  order: 'ltv_renew_at',
  due: (eb, now) =>
    eb.and([
      eb('status', '=', 'completed'),
      eb('pades_level', '=', 'B-LTA'),
      eb.or([
        eb('ltv_renew_at', '<=', now),
        ...weak.map((alg) => eb('ltv_algorithms', 'like', `%,${alg.replace(/[%_,]/g, '')},%`)),
      ]),
    ]),
});

export const claimRenewals = async (
  db: Db,
  weak: readonly string[],
  o: { now: number; workerId: string; leaseMs: number; limit: number },
) => (await claimLeases(db, renewLease(weak), o)).map((d) => ({ id: d.id, claimExpiresAt: o.now + o.leaseMs }));

export type Renewed = {
  signed_blob: string;
  signed_sha256: string;
  ltv_renew_at: number;
  ltv_algorithms: string;
  updated_at: number;
};

/** The renewed file, while this worker still holds the claim; the claim is released. */
export const recordRenewal = (trx: Kysely<Database>, id: string, workerId: string, set: Renewed): Promise<boolean> =>
  writeUnderLease(trx, renewLease([]), id, workerId, set, { release: true, where: { status: 'completed' } });

/** Hands a claim back (a failure: it lapses at `retryAt` and the document is due again then). */
export const releaseRenewal = (db: Db, id: string, workerId: string, retryAt?: number): Promise<boolean> =>
  writeUnderLease(
    db.kysely,
    renewLease([]),
    id,
    workerId,
    retryAt === undefined ? {} : { ltv_claim_expires_at: retryAt },
    { release: retryAt === undefined },
  );

/** How ltv_algorithms holds a timestamp's algorithms: comma-delimited on both ends, so LIKE matches whole names. */
export const ltvAlgorithms = (algorithms: readonly string[]): string => `,${algorithms.join(',')},`;
