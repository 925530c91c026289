// The SQL of lease claims, for every table a lease-claim job works on (deliveries, mail, seal jobs, bulk sends).
// Guarantees: a claim is one statement (FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite has a single writer), after a
// read that looks for a free row, so that finding nothing takes no lock and no transaction; concurrent claimers take
// disjoint rows; a lapsed lease is as good as none; an outcome is written only while its writer still holds the
// claim it worked under, so a worker that lost its lease writes nothing; guardedDelete applies that same guard to
// each row of a batch, in one statement.
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SqlBool,
} from 'kysely';
import { indexedBy, skipLocked, skipLockedClause, walkingIndexOrder, type Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import { keyedIn, keyIn } from '../db/batch-rows.js';
import { prepared } from '../db/pg-prepared.js';

export type LeasedTable = 'delivery_queue' | 'mail_outbox' | 'documents' | 'sms_outbox' | 'bulk_sends';

/** How one table holds leases. Column names are this table's own. */
export type Lease<T extends LeasedTable> = {
  table: T;
  /** Who holds the claim, and until when (epoch ms). */
  holder: keyof Database[T] & string;
  until: keyof Database[T] & string;
  /** Claimed first. */
  order: keyof Database[T] & string;
  /** The attempt counter that guards an outcome, if the table has one. */
  attempts?: keyof Database[T] & string;
  /** Columns set by every claim besides the lease (e.g. counting attempts at claim time). */
  onClaim?(eb: ExpressionBuilder<Database, T>): Record<string, unknown>;
} & (
  | {
      /** Rows due apart from the lease: status, due time. */
      due(eb: ExpressionBuilder<Database, T>, now: number): Expression<SqlBool>;
      indexes?: undefined;
    }
  | {
      /**
       * For a table small whenever statistics are taken that may hold a backlog later (a queue): its primary key's
       * index and its due index (on `order`), named in its statements where the database takes names (db.ts,
       * indexedBy). A row is then due once `order <= now`.
       */
      indexes: { key: string; due: string };
      due?: undefined;
    }
);

/** A claim of up to `limit` rows for `workerId`, leased until `now + leaseMs`. */
export type ClaimOptions = {
  now: number;
  workerId: string;
  leaseMs: number;
  limit: number;
  /** false: claim without looking first (the caller's last claim came back full, so more is likely due). */
  look?: boolean;
};

// Table and column names come from the Lease constants above, never from input; the loose type keeps one
// implementation for every table.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one implementation over several tables' columns
const loose = (db: Kysely<Database>) => db as unknown as Kysely<any>;

/**
 * Claims up to `limit` due rows for `workerId`, each leased until `now + leaseMs`; returns the claimed rows, with
 * only `columns` when given (a claim of hundreds of rows then builds no objects nobody reads).
 */
export async function claimLeases<
  T extends LeasedTable,
  C extends keyof Selectable<Database[T]> & string = keyof Selectable<Database[T]> & string,
>(db: Db, lease: Lease<T>, o: ClaimOptions, columns?: readonly C[]): Promise<Pick<Selectable<Database[T]>, C>[]> {
  if (lease.indexes) return claimIndexed(db, lease, lease.indexes, o, columns);
  const due = lease.due;
  const k = loose(db.kysely);
  const table: string = lease.table;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the loose builder's expression type
  const isFree = (eb: ExpressionBuilder<any, any>) =>
    eb.and([
      due(eb as never, o.now),
      eb.or([eb(lease.holder as string, 'is', null), eb(lease.until as string, '<=', o.now)]),
    ]);
  // An idle worker's claim usually finds nothing, so it looks first: finding nothing is then one read, where the
  // claim takes SQLite's write lock and is four round trips on PostgreSQL (BEGIN, SET LOCAL, UPDATE, COMMIT). With
  // rows due, the look is one more round trip per batch, which a caller draining a backlog skips (`look: false`).
  if (
    o.look !== false &&
    (await k.selectFrom(table).select('id').where(isFree).limit(1).executeTakeFirst()) === undefined
  )
    return [];
  return walkingIndexOrder(db, (trx) => {
    const due = skipLocked(
      db,
      loose(trx).selectFrom(table).select('id').where(isFree).orderBy(lease.order).limit(o.limit),
    );
    const update = loose(trx)
      .updateTable(table)
      .set((eb) => ({ ...lease.onClaim?.(eb as never), [lease.holder]: o.workerId, [lease.until]: o.now + o.leaseMs }))
      .where(() => keyIn(trx, 'id', due));
    // Named where the returned columns are fixed (a `*` would change with the table, which a kept plan refuses).
    return (columns ? update.returning(columns).modifyEnd(prepared) : update.returningAll()).execute() as Promise<
      Pick<Selectable<Database[T]>, C>[]
    >;
  });
}

/** claimLeases for a lease with named indexes: the same look and claim, written as SQL to name them. */
async function claimIndexed<T extends LeasedTable, C extends string>(
  db: Db,
  lease: Lease<T>,
  indexes: { key: string; due: string },
  o: ClaimOptions,
  columns?: readonly C[],
): Promise<Pick<Selectable<Database[T]>, C & keyof Selectable<Database[T]>>[]> {
  if (lease.onClaim) throw new Error('claimLeases: onClaim with named indexes');
  const [holder, until, order] = [lease.holder, lease.until, lease.order].map((n) => sql.ref(n));
  const free = sql`${order} <= ${o.now} AND (${holder} IS NULL OR ${until} <= ${o.now})`;
  const due = indexedBy(db, lease.table, indexes.due);
  if (o.look !== false) {
    const look = await sql`select 1 from ${due} where ${free} order by ${order} limit 1`.execute(db.kysely);
    if (look.rows.length === 0) return [];
  }
  const returning = columns ? sql.join(columns.map((c) => sql.ref(c))) : sql`*`;
  return walkingIndexOrder(db, async (trx) => {
    const r = await sql<Pick<Selectable<Database[T]>, C & keyof Selectable<Database[T]>>>`update ${indexedBy(
      db,
      lease.table,
      indexes.key,
    )} set ${holder} = ${o.workerId}, ${until} = ${o.now + o.leaseMs}
      where ${keyIn(
        trx,
        'id',
        sql`select ${sql.ref('id')} from ${due} where ${free} order by ${order}
        limit ${o.limit}${skipLockedClause(db)}`,
      )}
      returning ${returning}${prepared}`.execute(trx);
    return r.rows;
  });
}

export type UnderLease = {
  /** Clear the lease too (the row is done with, or handed back). */
  release: boolean;
  /** Only if the attempt counter still reads this (nothing was recorded since the claim). */
  attempts?: number;
  /** Further guards, e.g. the status the write moves from. */
  where?: Record<string, string | readonly string[]>;
};

/** Writes `set` on row `id` only while `workerId` holds its lease; true when the row was written. */
export async function writeUnderLease<T extends LeasedTable>(
  db: Kysely<Database>,
  lease: Lease<T>,
  id: string,
  workerId: string,
  set: Record<string, unknown>,
  o: UnderLease,
): Promise<boolean> {
  const table: string = lease.table;
  let q = loose(db)
    .updateTable(table)
    .set(o.release ? { ...set, [lease.holder]: null, [lease.until]: null } : set)
    .where('id', '=', id)
    .where(lease.holder as string, '=', workerId);
  if (o.attempts !== undefined && lease.attempts) q = q.where(lease.attempts as string, '=', o.attempts);
  for (const [column, value] of Object.entries(o.where ?? {})) {
    q = typeof value === 'string' ? q.where(column, '=', value) : q.where(column, 'in', [...value]);
  }
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** One row of a batched guarded write: its id, and the attempt counter it was claimed at. */
export type GuardedKey = { id: string; attempts: number };

/**
 * writeUnderLease's guard for a batch of rows that are done with: `DELETE … RETURNING id` of each row of `rows` while
 * `workerId` holds its lease and its attempt counter still reads `attempts`, unexecuted; each row found by its
 * primary key whatever the table's statistics say (db/batch-rows.ts, keyedIn; the key's index named where the lease
 * names it).
 */
export function guardedDelete<T extends LeasedTable>(
  db: Db,
  k: Kysely<Database>,
  lease: Lease<T>,
  workerId: string,
  rows: readonly GuardedKey[],
): RawBuilder<{ id: string }> {
  if (!lease.attempts) throw new Error('guardedDelete: a lease without an attempt counter');
  const table = lease.indexes ? indexedBy(db, lease.table, lease.indexes.key) : sql.table(lease.table);
  const matching = keyedIn(
    k,
    ['id', lease.attempts],
    rows.map((r) => [r.id, r.attempts] as const),
  );
  return sql<{ id: string }>`DELETE FROM ${table} WHERE ${matching} AND ${sql.ref(lease.holder)} = ${workerId}
    RETURNING ${sql.ref('id')} AS id`;
}
