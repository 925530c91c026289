import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { PruneTarget } from '../jobs/prune.repo.js';

export type BeginResult =
  | { kind: 'acquired' }
  | { kind: 'replay'; status: number; body: string; contentType: string | null }
  | { kind: 'in_progress'; retryAfterSeconds: number }
  | { kind: 'mismatch' };

type Row = Database['idempotency_keys'];

/**
 * Race-safe on both databases: the unique (key_id, idem_key) row is inserted before the handler runs, so of two
 * concurrent duplicates exactly one inserts; the other reads the row and answers in-progress (or replays).
 */
export async function beginIdempotent(
  db: Kysely<Database>,
  k: { keyId: string; idemKey: string; fingerprint: string },
  now: number,
  opts: { lockMs: number; ttlMs: number },
): Promise<BeginResult> {
  for (let round = 0; round < 3; round++) {
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        key_id: k.keyId,
        idem_key: k.idemKey,
        fingerprint: k.fingerprint,
        state: 'in_progress',
        status_code: null,
        response_body: null,
        content_type: null,
        created_at: now,
        locked_until: now + opts.lockMs,
      })
      .onConflict((oc) => oc.columns(['key_id', 'idem_key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: 'acquired' };

    const row = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key_id', '=', k.keyId)
      .where('idem_key', '=', k.idemKey)
      .executeTakeFirst();
    if (!row) continue; // deleted between insert and read: try again
    if (row.created_at + opts.ttlMs <= now) {
      await db
        .deleteFrom('idempotency_keys')
        .where('key_id', '=', k.keyId)
        .where('idem_key', '=', k.idemKey)
        .where('created_at', '=', row.created_at)
        .execute();
      continue;
    }
    return answer(db, row, k.fingerprint, now, opts.lockMs);
  }
  return { kind: 'in_progress', retryAfterSeconds: 1 };
}

async function answer(
  db: Kysely<Database>,
  row: Row,
  fingerprint: string,
  now: number,
  lockMs: number,
): Promise<BeginResult> {
  if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (row.state === 'done') {
    return {
      kind: 'replay',
      status: row.status_code ?? 200,
      body: row.response_body ?? '',
      contentType: row.content_type,
    };
  }
  if (row.locked_until > now) {
    return { kind: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil((row.locked_until - now) / 1000)) };
  }
  // The holder died without finishing: take the lock over, exactly one taker wins.
  const r = await db
    .updateTable('idempotency_keys')
    .set({ locked_until: now + lockMs })
    .where('key_id', '=', row.key_id)
    .where('idem_key', '=', row.idem_key)
    .where('state', '=', 'in_progress')
    .where('locked_until', '=', row.locked_until)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0 ? { kind: 'acquired' } : { kind: 'in_progress', retryAfterSeconds: 1 };
}

export async function completeIdempotent(
  db: Kysely<Database>,
  k: { keyId: string; idemKey: string },
  res: { status: number; body: string; contentType: string | null },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', status_code: res.status, response_body: res.body, content_type: res.contentType })
    .where('key_id', '=', k.keyId)
    .where('idem_key', '=', k.idemKey)
    .execute();
}

export async function releaseIdempotent(db: Kysely<Database>, k: { keyId: string; idemKey: string }): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('key_id', '=', k.keyId).where('idem_key', '=', k.idemKey).execute();
}

/** Keys at or past their retention (never below the 24 h lifetime, the boundary beginIdempotent treats as expired). */
export const IDEMPOTENCY_PRUNE: PruneTarget<'idempotency_keys'> = {
  table: 'idempotency_keys',
  key: ['key_id', 'idem_key'],
  order: 'created_at',
  expired: (eb, cutoff) => eb('idempotency_keys.created_at', '<=', cutoff),
};
