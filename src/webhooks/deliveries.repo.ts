// All SQL for webhook deliveries: claiming due rows, recording attempts, and the list/get/replay views.
// Claims are short statements; no transaction is ever open while a request is on the wire.
import type { Insertable } from 'kysely';
import type { Db } from '../db/db.js';
import { skipLocked } from '../db/db.js';
import type { DeliveryAttemptsTable } from '../db/schema.js';
import { iso, type Clock } from '../lib/clock.js';
import { pendingDelivery } from './outbox.repo.js';

export type ClaimedDelivery = {
  id: string;
  eventId: string;
  eventName: string;
  body: string;
  hookId: string;
  targetUrl: string;
  secret: string;
  hookDeleted: boolean;
  /** attempts already made when claimed; the record step only applies while this is unchanged */
  attempts: number;
  claimExpiresAt: number;
};

/** Claims up to `limit` due rows for `workerId`: pending, due, and unclaimed or with an expired lease. */
export async function claimDue(
  db: Db,
  opts: { now: number; workerId: string; leaseMs: number; limit: number },
): Promise<ClaimedDelivery[]> {
  const { now, workerId, leaseMs, limit } = opts;
  const expires = now + leaseMs;
  // SKIP LOCKED lets concurrent PostgreSQL workers take disjoint rows; SQLite has a single writer anyway.
  const due = skipLocked(
    db,
    db.kysely
      .selectFrom('deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claim_expires_at', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(limit),
  );
  const claimed = await db.kysely
    .updateTable('deliveries')
    .set({ claimed_by: workerId, claim_expires_at: expires })
    .where('id', 'in', due)
    .returning(['id', 'attempts'])
    .execute();
  if (claimed.length === 0) return [];

  const attemptsById = new Map(claimed.map((c) => [c.id, c.attempts]));
  const rows = await db.kysely
    .selectFrom('deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .innerJoin('hooks as h', 'h.id', 'd.hook_id')
    .where(
      'd.id',
      'in',
      claimed.map((c) => c.id),
    )
    .select([
      'd.id',
      'd.event_id',
      'd.next_attempt_at',
      'e.name',
      'e.body',
      'd.hook_id',
      'h.target_url',
      'h.secret',
      'h.deleted_at',
    ])
    .orderBy('d.next_attempt_at')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventName: r.name,
    body: r.body,
    hookId: r.hook_id,
    targetUrl: r.target_url,
    secret: r.secret,
    hookDeleted: r.deleted_at !== null,
    attempts: attemptsById.get(r.id)!,
    claimExpiresAt: expires,
  }));
}

export type AttemptOutcome = {
  kind: 'attempt';
  deliveryId: string;
  /** attempts at claim time; this outcome is attempt number attemptsAtClaim + 1 */
  attemptsAtClaim: number;
  ok: boolean;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  /** when the next attempt is due after a failure; null gives up */
  nextAttemptAt: number | null;
  recordedAt: number;
};

/** A claimed row that is not sent: `release` hands it back, `drop` gives up without an attempt (hook deleted). */
export type NonAttemptOutcome = {
  kind: 'release' | 'drop';
  deliveryId: string;
  attemptsAtClaim: number;
  recordedAt: number;
  error?: string;
};

export type Outcome = AttemptOutcome | NonAttemptOutcome;

/**
 * Writes a batch of outcomes in one transaction. Each row update is guarded by the claim (claimed_by and the
 * attempt count seen at claim time); an outcome whose claim was lost changes nothing and records no attempt.
 * Returns how many outcomes were applied.
 */
export async function recordOutcomes(db: Db, workerId: string, outcomes: Outcome[]): Promise<number> {
  if (outcomes.length === 0) return 0;
  // A stable order keeps concurrent PostgreSQL writers from deadlocking on each other's rows.
  const sorted = [...outcomes].sort((a, b) => (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0));
  return db.kysely.transaction().execute(async (trx) => {
    let applied = 0;
    const attemptRows: Insertable<DeliveryAttemptsTable>[] = [];
    for (const o of sorted) {
      const guard = trx
        .updateTable('deliveries')
        .where('id', '=', o.deliveryId)
        .where('claimed_by', '=', workerId)
        .where('attempts', '=', o.attemptsAtClaim);
      let res;
      if (o.kind === 'attempt') {
        const status = o.ok ? 'succeeded' : o.nextAttemptAt === null ? 'giving_up' : 'pending';
        res = await guard
          .set({
            status,
            attempts: o.attemptsAtClaim + 1,
            next_attempt_at: o.ok ? null : o.nextAttemptAt,
            claimed_by: null,
            claim_expires_at: null,
            last_status_code: o.statusCode,
            last_error: o.error,
            updated_at: o.recordedAt,
          })
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 1) {
          attemptRows.push({
            delivery_id: o.deliveryId,
            attempt: o.attemptsAtClaim + 1,
            started_at: o.startedAt,
            duration_ms: o.durationMs,
            status_code: o.statusCode,
            response_body: o.responseBody,
            error: o.error,
            worker: workerId,
          });
        }
      } else if (o.kind === 'release') {
        res = await guard.set({ claimed_by: null, claim_expires_at: null }).executeTakeFirst();
      } else {
        res = await guard
          .set({
            status: 'giving_up',
            next_attempt_at: null,
            claimed_by: null,
            claim_expires_at: null,
            last_error: o.error ?? null,
            updated_at: o.recordedAt,
          })
          .executeTakeFirst();
      }
      if (Number(res.numUpdatedRows) === 1) applied++;
    }
    for (let i = 0; i < attemptRows.length; i += 500) {
      await trx
        .insertInto('delivery_attempts')
        .values(attemptRows.slice(i, i + 500))
        // The claim guard already excludes a second writer; this only makes a retried write harmless.
        .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
        .execute();
    }
    return applied;
  });
}

export type AttemptView = {
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
};

export type DeliveryView = {
  id: string;
  workspace_id: string;
  event_id: string;
  event: string;
  hook_id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  last_status_code: number | null;
  last_error: string | null;
  attempts_log: AttemptView[];
};

const baseView = (db: Db) =>
  db.kysely
    .selectFrom('deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.workspace_id',
      'd.event_id',
      'e.name',
      'd.hook_id',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.created_at',
      'd.last_status_code',
      'd.last_error',
    ]);

type BaseRow = Awaited<ReturnType<ReturnType<typeof baseView>['execute']>>[number];

async function toViews(db: Db, rows: BaseRow[]): Promise<DeliveryView[]> {
  if (rows.length === 0) return [];
  const attempts = await db.kysely
    .selectFrom('delivery_attempts')
    .select(['delivery_id', 'attempt', 'started_at', 'duration_ms', 'status_code', 'error', 'response_body'])
    .where(
      'delivery_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
  const log = new Map<string, AttemptView[]>();
  for (const a of attempts) {
    const list = log.get(a.delivery_id) ?? [];
    list.push({
      attempt: a.attempt,
      started_at: iso(a.started_at),
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
      response_body: a.response_body,
    });
    log.set(a.delivery_id, list);
  }
  return rows.map((r) => ({
    id: r.id,
    workspace_id: r.workspace_id,
    event_id: r.event_id,
    event: r.name,
    hook_id: r.hook_id,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
    created_at: iso(r.created_at),
    last_status_code: r.last_status_code,
    last_error: r.last_error,
    attempts_log: log.get(r.id) ?? [],
  }));
}

/** Newest first; limit defaults to 50, at most 500. */
export async function listDeliveries(
  db: Db,
  opts: { workspaceId?: string; hookId?: string; limit?: number } = {},
): Promise<DeliveryView[]> {
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
  let q = baseView(db);
  if (opts.workspaceId !== undefined) q = q.where('d.workspace_id', '=', opts.workspaceId);
  if (opts.hookId !== undefined) q = q.where('d.hook_id', '=', opts.hookId);
  const rows = await q.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit).execute();
  return toViews(db, rows);
}

/** By id alone: callers scope it (workspace_id is in the view) before showing it. */
export async function getDelivery(db: Db, id: string): Promise<DeliveryView | undefined> {
  const row = await baseView(db).where('d.id', '=', id).executeTakeFirst();
  return row ? (await toViews(db, [row]))[0] : undefined;
}

/** A new pending delivery of the same event to the same hook, due now; the event id stays, so receivers dedupe. */
export async function replayDelivery(db: Db, id: string, clock: Clock): Promise<DeliveryView | undefined> {
  const src = await db.kysely
    .selectFrom('deliveries')
    .select(['event_id', 'hook_id', 'workspace_id'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!src) return undefined;
  const now = clock.now();
  const row = pendingDelivery(src.event_id, src.hook_id, src.workspace_id, now);
  await db.kysely.insertInto('deliveries').values(row).execute();
  return getDelivery(db, row.id);
}
