// All SQL for webhook deliveries: claiming due rows, recording attempts, and the list/get/replay reads.
// Claims are short statements; no transaction is ever open while a request is on the wire.
import { sql, type Insertable, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { forUpdate, writingCtes, type Db } from '../db/db.js';
import { claimLeases, guardedUpdate, writeManyUnderLease, type GuardedRow, type Lease } from '../jobs/lease.repo.js';
import type { Database, DeliveryAttemptsTable } from '../db/schema.js';
import { batchRows, type ColumnType } from '../db/batch-rows.js';
import { prepared } from '../db/pg-prepared.js';
import { pendingDelivery } from './outbox.repo.js';
import { DUE_STATUSES, type DeliveryStatus } from './states.js';

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

/**
 * How deliveries hold leases: due while pending or retrying and past next_attempt_at; an outcome is guarded by the
 * attempt count.
 */
export const DELIVERY_LEASE: Lease<'deliveries'> = {
  table: 'deliveries',
  holder: 'claimed_by',
  until: 'claim_expires_at',
  attempts: 'attempts',
  order: 'next_attempt_at',
  // The statuses as literals: the planner then sees the partial index deliveries_open_due (migration 018) applies.
  due: (eb, now) =>
    eb.and([
      eb(
        'status',
        'in',
        DUE_STATUSES.map((s) => sql.lit(s)),
      ),
      eb('next_attempt_at', '<=', now),
    ]),
};

/** Claims up to `limit` due rows for `workerId`, with what sending them needs (event body, hook URL and secret). */
export async function claimDue(
  db: Db,
  opts: { now: number; workerId: string; leaseMs: number; limit: number },
): Promise<ClaimedDelivery[]> {
  // The claim returns the few columns it needs; the bodies and hooks are then read by id (a claim's rows share a
  // few hooks), so the claimed rows are not read a second time.
  const claimed = await claimLeases(db, DELIVERY_LEASE, opts, [
    'id',
    'attempts',
    'event_id',
    'hook_id',
    'next_attempt_at',
  ]);
  if (claimed.length === 0) return [];
  // The ids as one parameter (batch-rows.ts): the same statement text for any claim's size.
  const idsIn = (ids: string[]) =>
    sql<SqlBool>`${sql.ref('id')} IN (SELECT ids.id FROM ${batchRows(
      db.kysely,
      [['id', 'text']],
      ids.map((id) => [id]),
      'ids',
    )})`;
  const events = await db.kysely
    .selectFrom('events')
    .select(['id', 'name', 'body'])
    .where(idsIn(claimed.map((c) => c.event_id)))
    .modifyEnd(prepared)
    .execute();
  const hooks = await db.kysely
    .selectFrom('hooks')
    .select(['id', 'target_url', 'secret', 'deleted_at'])
    .where(idsIn([...new Set(claimed.map((c) => c.hook_id))]))
    .modifyEnd(prepared)
    .execute();
  const eventById = new Map(events.map((e) => [e.id, e]));
  const hookById = new Map(hooks.map((h) => [h.id, h]));
  const out: ClaimedDelivery[] = [];
  // Oldest due first, as the claim chose them (RETURNING gives no order).
  claimed.sort((a, b) => (a.next_attempt_at ?? 0) - (b.next_attempt_at ?? 0));
  for (const c of claimed) {
    const e = eventById.get(c.event_id);
    const h = hookById.get(c.hook_id);
    // Both are foreign keys of the row; a missing one cannot happen, and such a row would just wait out its lease.
    if (e === undefined || h === undefined) continue;
    out.push({
      id: c.id,
      eventId: c.event_id,
      eventName: e.name,
      body: e.body,
      hookId: c.hook_id,
      targetUrl: h.target_url,
      secret: h.secret,
      hookDeleted: h.deleted_at !== null,
      attempts: c.attempts,
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
 * A claimed row that is not sent: `release` hands it back, `drop` gives up without an attempt (hook deleted), `defer`
 * hands it back due at `nextAttemptAt` (its receiver is slow), its attempt count and status unchanged.
 */
type Unsent = { deliveryId: string; attemptsAtClaim: number; recordedAt: number };
export type NonAttemptOutcome =
  | (Unsent & { kind: 'release' })
  | (Unsent & { kind: 'drop'; error?: string })
  | (Unsent & { kind: 'defer'; nextAttemptAt: number });

export type Outcome = AttemptOutcome | NonAttemptOutcome;

// What each kind of outcome sets, typed for the batched write (jobs/lease.repo.ts, writeManyUnderLease).
const ATTEMPT_COLUMNS = {
  status: 'text',
  attempts: 'integer',
  next_attempt_at: 'bigint',
  last_status_code: 'integer',
  last_error: 'text',
  updated_at: 'bigint',
} as const;
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
type UnsentKind = NonAttemptOutcome['kind'];
type ColumnsOf = Partial<Record<string, ColumnType>>;
/** What each unsent outcome writes besides clearing the claim (all under it, guarded by the attempt count). */
const UNSENT: {
  [K in UnsentKind]: { columns: ColumnsOf; set(o: Extract<Outcome, { kind: K }>): Record<string, unknown> };
} = {
  release: { columns: {}, set: () => ({}) },
  drop: {
    columns: { status: 'text', next_attempt_at: 'bigint', last_error: 'text', updated_at: 'bigint' },
    set: (o) => ({
      status: 'giving_up' satisfies DeliveryStatus,
      next_attempt_at: null,
      last_error: o.error ?? null,
      updated_at: o.recordedAt,
    }),
  },
  defer: { columns: { next_attempt_at: 'bigint' }, set: (o) => ({ next_attempt_at: o.nextAttemptAt }) },
};

/**
 * Writes a batch of outcomes atomically, a few statements whatever its size (one per kind of outcome, one for the
 * attempt rows); on PostgreSQL a batch of attempts only (the usual one) is a single statement, the attempt rows
 * written from the guarded update's own result. Each row update is guarded by the claim (claimed_by and the attempt
 * count seen at claim time); an outcome whose claim was lost changes nothing and records no attempt. Returns how
 * many were applied.
 */
export async function recordOutcomes(db: Db, workerId: string, outcomes: Outcome[]): Promise<number> {
  if (outcomes.length === 0) return 0;
  // A stable order keeps concurrent PostgreSQL writers from deadlocking on each other's rows.
  const sorted = [...outcomes].sort((a, b) => (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0));
  const attempts = sorted.filter((o): o is AttemptOutcome => o.kind === 'attempt');
  const release = { release: true };
  const attemptUpdate = (k: Kysely<Database>) =>
    guardedUpdate(k, DELIVERY_LEASE, workerId, ATTEMPT_COLUMNS, attempts.map(attemptWrite), release);
  if (writingCtes(db) && attempts.length === sorted.length) {
    const r = await sql<{ n: number }>`WITH written AS (${attemptUpdate(db.kysely)}),
      recorded AS (${insertAttempts(db.kysely, attempts, workerId, sql`SELECT id FROM written`)})
      SELECT count(*)::int AS n FROM written${prepared}`.execute(db.kysely);
    return r.rows[0]!.n;
  }
  return db.kysely.transaction().execute(async (trx) => {
    const written = new Set(attempts.length === 0 ? [] : (await attemptUpdate(trx).execute(trx)).rows.map((w) => w.id));
    let applied = written.size;
    for (const kind of Object.keys(UNSENT) as UnsentKind[]) {
      const { columns, set } = UNSENT[kind] as {
        columns: ColumnsOf;
        set(o: NonAttemptOutcome): Record<string, unknown>;
      };
      const rows = sorted
        .filter((o): o is NonAttemptOutcome => o.kind === kind)
        .map((o) => ({ id: o.deliveryId, attempts: o.attemptsAtClaim, set: set(o) }));
      applied += (await writeManyUnderLease(trx, DELIVERY_LEASE, workerId, columns, rows, release)).length;
    }
    const recorded = attempts.filter((o) => written.has(o.deliveryId));
    if (recorded.length > 0) await insertAttempts(trx, recorded, workerId).execute(trx);
    return applied;
  });
}

/** An attempt's guarded write of its delivery row. */
const attemptWrite = (o: AttemptOutcome): GuardedRow => ({
  id: o.deliveryId,
  attempts: o.attemptsAtClaim,
  set: {
    status: (o.ok ? 'succeeded' : o.nextAttemptAt === null ? 'giving_up' : 'retrying') satisfies DeliveryStatus,
    attempts: o.attemptsAtClaim + 1,
    next_attempt_at: o.ok ? null : o.nextAttemptAt,
    last_status_code: o.statusCode,
    last_error: o.error,
    updated_at: o.recordedAt,
  },
});

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

const historyQuery = (db: Db) =>
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

export type DeliveryRow = Awaited<ReturnType<ReturnType<typeof historyQuery>['execute']>>[number];
export type AttemptRow = Pick<
  DeliveryAttemptsTable,
  'delivery_id' | 'attempt' | 'started_at' | 'duration_ms' | 'status_code' | 'error' | 'response_body'
>;
/** A delivery with every attempt, oldest attempt first. */
export type DeliveryRecord = { row: DeliveryRow; attempts: AttemptRow[] };

async function withAttempts(db: Db, rows: DeliveryRow[]): Promise<DeliveryRecord[]> {
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
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
  return rows.map((row) => ({ row, attempts: byDelivery.get(row.id) ?? [] }));
}

/** Where a page of history starts: after this delivery, in the newest-first order (created_at, then id). */
export type HistoryCursor = Pick<DeliveryRow, 'created_at' | 'id'>;

export type DeliveryQuery = {
  workspaceId?: string;
  hookId?: string;
  /** Only rows in one of these states (none given: every state). */
  statuses?: readonly DeliveryStatus[];
  /** Only rows older than this one (newest first: created_at, then id). */
  after?: HistoryCursor;
  limit?: number;
};

/** Newest first; limit defaults to 50, at most 500. */
export async function findDeliveries(db: Db, opts: DeliveryQuery = {}): Promise<DeliveryRecord[]> {
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
  let q = historyQuery(db);
  if (opts.workspaceId !== undefined) q = q.where('d.workspace_id', '=', opts.workspaceId);
  if (opts.hookId !== undefined) q = q.where('d.hook_id', '=', opts.hookId);
  if (opts.statuses !== undefined) q = q.where('d.status', 'in', [...opts.statuses]);
  const after = opts.after;
  if (after !== undefined) {
    // A row comparison, so the (workspace_id | hook_id, created_at, id) order is a seek, not a filter.
    q = q.where((eb) => eb(eb.refTuple('d.created_at', 'd.id'), '<', eb.tuple(after.created_at, after.id)));
  }
  return withAttempts(db, await q.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit).execute());
}

/** One row without its attempts, by id alone (callers scope it: the row carries workspace_id and hook_id). */
export const findDeliveryRow = (db: Db, id: string): Promise<DeliveryRow | undefined> =>
  historyQuery(db).where('d.id', '=', id).executeTakeFirst();

/** By id alone: callers scope it (the row carries workspace_id) before showing it. */
export async function findDelivery(db: Db, id: string): Promise<DeliveryRecord | undefined> {
  const row = await findDeliveryRow(db, id);
  return row ? (await withAttempts(db, [row]))[0] : undefined;
}

export type Replayed = { id: string; eventId: string; hookId: string; workspaceId: string };

/**
 * Replay: a new `pending` delivery of the same event (same event id and body) to the same hook, due now, with its
 * own attempts; the source row is left as it is, in whatever state. Nothing is written, and undefined returned,
 * when there is no such delivery, its hook is deleted, or (given `scope`) it is not that workspace's hook's.
 */
export async function insertReplay(
  database: Db,
  db: Kysely<Database>,
  id: string,
  now: number,
  scope?: { workspaceId: string; hookId: string },
): Promise<Replayed | undefined> {
  // The source row is locked until the insert commits: the prune job's SKIP LOCKED then passes it by, so its event
  // (deleted only once no delivery of it is left) cannot vanish between this read and the insert's reference to it.
  let q = db
    .selectFrom('deliveries as d')
    .innerJoin('hooks as h', 'h.id', 'd.hook_id')
    .select(['d.event_id', 'd.hook_id', 'd.workspace_id'])
    .where('d.id', '=', id)
    .where('h.deleted_at', 'is', null);
  if (scope) q = q.where('d.workspace_id', '=', scope.workspaceId).where('d.hook_id', '=', scope.hookId);
  const src = await forUpdate(database, q).executeTakeFirst();
  if (!src) return undefined;
  // A hook deleted between this read and the insert leaves a row the dispatcher gives up unsent ("hook deleted").
  const row = pendingDelivery(src.event_id, src.hook_id, src.workspace_id, now);
  await db.insertInto('deliveries').values(row).execute();
  return { id: row.id, eventId: row.event_id, hookId: row.hook_id, workspaceId: row.workspace_id };
}
