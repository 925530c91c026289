// The SQL of webhook delivery history: the list and get reads, with every attempt, and replay.
import type { Kysely } from 'kysely';
import { forUpdate, type Db } from '../db/db.js';
import type { Database, DeliveryAttemptsTable } from '../db/schema.js';
import { pendingDelivery } from './outbox.repo.js';
import type { DeliveryStatus } from './states.js';

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
