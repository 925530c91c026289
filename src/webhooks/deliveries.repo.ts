// The SQL of sending webhook deliveries: claiming due rows and recording their outcomes (the history's reads and
// replay: history.repo.ts).
// Claims are short statements; no transaction is ever open while a request is on the wire.
import { sql, type Insertable, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { writingCtes, type Db } from '../db/db.js';
import { claimLeases, guardedDelete, type ClaimOptions, type GuardedKey, type Lease } from '../jobs/lease.repo.js';
import type { Database, DeliveriesTable, DeliveryAttemptsTable } from '../db/schema.js';
import { batchRows, type BatchColumn, type ColumnType } from '../db/batch-rows.js';
import { prepared } from '../db/pg-prepared.js';
import type { DeliveryStatus } from './states.js';

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
  /** when it was due (a release hands it back due then) */
  dueAt: number;
  claimExpiresAt: number;
};

/**
 * How deliveries hold leases: through their queue row (migration 028), due once past next_attempt_at; an outcome is
 * guarded by the attempt count.
 */
export const DELIVERY_LEASE = {
  table: 'delivery_queue',
  holder: 'claimed_by',
  until: 'claim_expires_at',
  attempts: 'attempts',
  order: 'next_attempt_at',
  // Due once past next_attempt_at (`order`). SQLite names a TEXT primary key's index itself
  // (sqlite_autoindex_<table>_1); a wrong name fails every statement.
  indexes: { key: 'sqlite_autoindex_delivery_queue_1', due: 'delivery_queue_due' },
} as const satisfies Lease<'delivery_queue'>;

// The ids as one parameter (batch-rows.ts): the same statement text for any claim's size.
const idsIn = (db: Db, column: string, ids: readonly string[]) =>
  sql<SqlBool>`${sql.ref(column)} IN (SELECT ids.id FROM ${batchRows(
    db.kysely,
    [['id', 'text']],
    ids.map((id) => [id]),
    'ids',
  )})`;

/** Claims up to `limit` due rows for `workerId`, with what sending them needs (event body, hook URL and secret). */
export async function claimDue(db: Db, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  // The claim returns the queue's few columns; the deliveries with their events, and the hooks, are then read by id
  // (a claim's rows share a few hooks).
  const claimed = await claimLeases(db, DELIVERY_LEASE, opts, ['id', 'attempts', 'next_attempt_at']);
  if (claimed.length === 0) return [];
  const rows = await db.kysely
    .selectFrom('deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'd.hook_id', 'd.event_id', 'e.name', 'e.body'])
    .where(
      idsIn(
        db,
        'd.id',
        claimed.map((c) => c.id),
      ),
    )
    .modifyEnd(prepared)
    .execute();
  const hooks = await db.kysely
    .selectFrom('hooks')
    .select(['id', 'target_url', 'secret', 'deleted_at'])
    .where(idsIn(db, 'id', [...new Set(rows.map((r) => r.hook_id))]))
    .modifyEnd(prepared)
    .execute();
  const rowById = new Map(rows.map((r) => [r.id, r]));
  const hookById = new Map(hooks.map((h) => [h.id, h]));
  const out: ClaimedDelivery[] = [];
  // Oldest due first, as the claim chose them (RETURNING gives no order).
  claimed.sort((a, b) => a.next_attempt_at - b.next_attempt_at);
  for (const c of claimed) {
    const r = rowById.get(c.id);
    const h = r && hookById.get(r.hook_id);
    // Foreign keys all; a missing one cannot happen, and such a row would just wait out its lease.
    if (r === undefined || h === undefined) continue;
    out.push({
      id: c.id,
      eventId: r.event_id,
      eventName: r.name,
      body: r.body,
      hookId: r.hook_id,
      targetUrl: h.target_url,
      secret: h.secret,
      hookDeleted: h.deleted_at !== null,
      attempts: c.attempts,
      dueAt: c.next_attempt_at,
      claimExpiresAt: opts.now + opts.leaseMs,
    });
  }
  return out;
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

/**
 * A claimed row that is not sent: `release` hands it back due as it was (`nextAttemptAt`, its due time at claim),
 * `drop` gives up without an attempt (hook deleted), `defer` hands it back due at `nextAttemptAt` (its receiver is
 * slow), its attempt count and status unchanged.
 */
type Unsent = { deliveryId: string; attemptsAtClaim: number; recordedAt: number };
export type NonAttemptOutcome =
  | (Unsent & { kind: 'release'; nextAttemptAt: number })
  | (Unsent & { kind: 'drop'; error?: string })
  | (Unsent & { kind: 'defer'; nextAttemptAt: number });

export type Outcome = AttemptOutcome | NonAttemptOutcome;

// What an attempt writes in the delivery's row.
const ATTEMPT_COLUMNS = {
  status: 'text',
  attempts: 'integer',
  next_attempt_at: 'bigint',
  last_status_code: 'integer',
  last_error: 'text',
  updated_at: 'bigint',
} as const;
const DEFER_COLUMNS = { next_attempt_at: 'bigint' } as const;
const DROP_COLUMNS = { status: 'text', next_attempt_at: 'bigint', last_error: 'text', updated_at: 'bigint' } as const;
// The attempt rows' columns and types; recordOutcomes writes each row as an object and takes its cells in this order.
const ATTEMPT_ROW: readonly (readonly [keyof DeliveryAttemptsTable & string, ColumnType])[] = [
  ['delivery_id', 'text'],
  ['attempt', 'integer'],
  ['started_at', 'bigint'],
  ['duration_ms', 'integer'],
  ['status_code', 'integer'],
  ['response_body', 'text'],
  ['error', 'text'],
  ['worker', 'text'],
];
// A queue row written again for a delivery that stays open.
const QUEUE_ROW: readonly BatchColumn[] = [
  ['id', 'text'],
  ['next_attempt_at', 'bigint'],
  ['attempts', 'integer'],
];

/** An attempt after which the delivery is settled. */
const settles = (o: AttemptOutcome) => o.ok || o.nextAttemptAt === null;
const guard = (o: Outcome): GuardedKey => ({ id: o.deliveryId, attempts: o.attemptsAtClaim });
/** An outcome's write of its delivery row: its own values for the batch's columns. */
type GuardedRow = GuardedKey & { set: Record<string, unknown> };

/**
 * Writes a batch of outcomes atomically, in a few statements whatever its size. The claim is the queue row's
 * (migration 028): an outcome applies only while this worker still holds it with the attempt count seen at claim
 * time, and one whose claim was lost changes nothing and records no attempt. Every applied outcome deletes its queue
 * row; a delivery that stays open (a retry, a deferral, a release) is queued again, unclaimed, due when it says. The
 * applied outcomes are then written into their deliveries' rows (columns no index holds: heap-only updates on
 * PostgreSQL) and their attempt rows inserted. On PostgreSQL a batch of settling attempts (the usual one) is a single
 * statement. Returns how many were applied.
 */
export async function recordOutcomes(db: Db, workerId: string, outcomes: Outcome[]): Promise<number> {
  if (outcomes.length === 0) return 0;
  // A stable order keeps concurrent PostgreSQL writers from deadlocking on each other's rows.
  const sorted = [...outcomes].sort((a, b) => (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0));
  const attempts = sorted.filter((o): o is AttemptOutcome => o.kind === 'attempt');
  if (writingCtes(db) && attempts.length === sorted.length && attempts.every(settles)) {
    const k = db.kysely;
    const done = sql`SELECT id FROM done`;
    const r = await sql<{
      n: number;
    }>`WITH done AS (${guardedDelete(db, k, DELIVERY_LEASE, workerId, attempts.map(guard))}),
      written AS (${updateDeliveries(k, ATTEMPT_COLUMNS, attempts.map(attemptWrite), done)}),
      recorded AS (${insertAttempts(k, attempts, workerId, done)})
      SELECT count(*)::int AS n FROM done${prepared}`.execute(k);
    return r.rows[0]!.n;
  }
  return db.kysely.transaction().execute(async (trx) => {
    const written = new Set(
      (await guardedDelete(db, trx, DELIVERY_LEASE, workerId, sorted.map(guard)).execute(trx)).rows.map((w) => w.id),
    );
    const applied = <O extends Outcome>(list: O[]) => list.filter((o) => written.has(o.deliveryId));
    const byKind = <K extends Outcome['kind']>(kind: K) =>
      applied(sorted.filter((o): o is Extract<Outcome, { kind: K }> => o.kind === kind));
    const recorded = applied(attempts);
    const drops = byKind('drop');
    const defers = byKind('defer');
    const open: (readonly unknown[])[] = [
      ...recorded.filter((o) => !settles(o)).map((o) => [o.deliveryId, o.nextAttemptAt, o.attemptsAtClaim + 1]),
      ...defers.map((o) => [o.deliveryId, o.nextAttemptAt, o.attemptsAtClaim]),
      ...byKind('release').map((o) => [o.deliveryId, o.nextAttemptAt, o.attemptsAtClaim]),
    ];
    if (open.length > 0) {
      await sql`INSERT INTO delivery_queue (id, next_attempt_at, attempts)
        SELECT * FROM ${batchRows(trx, QUEUE_ROW, open)} WHERE true`.execute(trx);
    }
    const update = async (columns: Partial<Record<keyof DeliveriesTable & string, ColumnType>>, rows: GuardedRow[]) => {
      if (rows.length > 0) await updateDeliveries(trx, columns, rows).execute(trx);
    };
    await update(ATTEMPT_COLUMNS, recorded.map(attemptWrite));
    await update(DROP_COLUMNS, drops.map(dropWrite));
    await update(DEFER_COLUMNS, defers.map(deferWrite));
    if (recorded.length > 0) await insertAttempts(trx, recorded, workerId).execute(trx);
    return written.size;
  });
}

/** An attempt's write of its delivery row. */
const attemptWrite = (o: AttemptOutcome): GuardedRow => ({
  ...guard(o),
  set: {
    status: (o.ok ? 'succeeded' : o.nextAttemptAt === null ? 'giving_up' : 'retrying') satisfies DeliveryStatus,
    attempts: o.attemptsAtClaim + 1,
    next_attempt_at: o.ok ? null : o.nextAttemptAt,
    last_status_code: o.statusCode,
    last_error: o.error,
    updated_at: o.recordedAt,
  },
});

const deferWrite = (o: Extract<Outcome, { kind: 'defer' }>): GuardedRow => ({
  ...guard(o),
  set: { next_attempt_at: o.nextAttemptAt },
});

const dropWrite = (o: Extract<Outcome, { kind: 'drop' }>): GuardedRow => ({
  ...guard(o),
  set: {
    status: 'giving_up' satisfies DeliveryStatus,
    next_attempt_at: null,
    last_error: o.error ?? null,
    updated_at: o.recordedAt,
  },
});

/**
 * `UPDATE deliveries … FROM` a batch of rows (each its own values for `columns`), of the ids `onlyIds` (a subquery)
 * returns when given. Unguarded: callers pass only outcomes whose queue row the claim's guard let through.
 */
function updateDeliveries(
  k: Kysely<Database>,
  columns: Partial<Record<keyof DeliveriesTable & string, ColumnType>>,
  rows: readonly GuardedRow[],
  onlyIds?: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const names = Object.keys(columns) as (keyof DeliveriesTable & string)[];
  const batch = batchRows(
    k,
    [['id', 'text'], ...names.map((c, i): BatchColumn => [`c${i}`, columns[c]!])],
    rows.map((r) => [r.id, ...names.map((c) => r.set[c] ?? null)]),
  );
  const only = onlyIds ? sql` AND v.id IN (${onlyIds})` : sql``;
  return sql`UPDATE deliveries SET ${sql.join(names.map((c, i) => sql`${sql.ref(c)} = ${sql.raw(`v.c${i}`)}`))}
    FROM ${batch} WHERE deliveries.id = v.id${only}`;
}

/**
 * The attempt rows' `INSERT`, of those among `list` whose delivery id `onlyIds` (a subquery) returns when given. The
 * claim guard already excludes a second writer; ON CONFLICT only makes a retried write harmless. (`WHERE`: SQLite's
 * parser needs one between an INSERT's SELECT and its ON CONFLICT.)
 */
function insertAttempts(
  k: Kysely<Database>,
  list: readonly AttemptOutcome[],
  workerId: string,
  onlyIds?: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const cells = list.map((o) => {
    const row: Insertable<DeliveryAttemptsTable> = {
      delivery_id: o.deliveryId,
      attempt: o.attemptsAtClaim + 1,
      started_at: o.startedAt,
      duration_ms: o.durationMs,
      status_code: o.statusCode,
      response_body: o.responseBody,
      error: o.error,
      worker: workerId,
    };
    return ATTEMPT_ROW.map(([column]) => row[column] ?? null);
  });
  const only = onlyIds ? sql`a.delivery_id IN (${onlyIds})` : sql`true`;
  return sql`INSERT INTO delivery_attempts (${sql.raw(ATTEMPT_ROW.map(([c]) => c).join(', '))})
    SELECT * FROM ${batchRows(k, ATTEMPT_ROW, cells, 'a')} WHERE ${only}
    ON CONFLICT (delivery_id, attempt) DO NOTHING`;
}
