// The SQL of pruning, for every growing table (one mechanism; each feature describes its table as a PruneTarget).
// Guarantees: one batch is one statement, `DELETE … WHERE key IN (SELECT key … ORDER BY age LIMIT n)` (or, for a
// target that retires rows, `UPDATE … SET column = now` with the same selection), so it changes at most n rows and
// holds its locks only that long; on PostgreSQL the inner select is FOR UPDATE SKIP
// LOCKED, so concurrent pruners take disjoint rows and never wait on each other (SQLite has a single writer), and
// every row is deleted, and counted, once. What may go is the target's own condition, read inside the statement.
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import { skipLocked, type Db } from '../db/db.js';
import type { Database } from '../db/schema.js';

export type PrunedTable = keyof Database & string;

/** One growing table: its key, the indexed column its scan walks (oldest first) and which rows may go. */
export type PruneTarget<T extends PrunedTable = PrunedTable> = {
  table: T;
  /** The primary key (two columns for a composite one). */
  key: readonly [keyof Database[T] & string, ...(keyof Database[T] & string)[]];
  order: keyof Database[T] & string;
  /**
   * The rows that may go when everything done before `cutoff` is past its retention: the age test and whatever
   * still holds a row (a live document, a pending delivery). Column refs qualified by the table name resolve to
   * the inner select.
   */
  expired(eb: ExpressionBuilder<Database, T>, cutoff: number): Expression<SqlBool>;
  /**
   * Retire instead of delete: set this column to the run's time (a soft delete the rest of the code honours). The
   * `expired` condition must leave out rows already retired.
   */
  retire?: keyof Database[T] & string;
};

/** Any table's target (a union, so lists of targets of different tables type-check). */
export type AnyPruneTarget = { [T in PrunedTable]: PruneTarget<T> }[PrunedTable];

// Table and column names come from PruneTarget constants, never from input; the loose type keeps one
// implementation for every table.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one implementation over several tables' columns
const loose = (db: Kysely<Database>) => db as unknown as Kysely<any>;

/** Deletes (or retires, as of `now`) at most `limit` of the target's expired rows, oldest first; returns how many. */
export async function pruneBatch(
  db: Db,
  target: AnyPruneTarget,
  cutoff: number,
  limit: number,
  now: number,
): Promise<number> {
  const k = loose(db.kysely);
  const key = target.key as readonly string[];
  const table: string = target.table;
  const expired = target.expired as (eb: unknown, cutoff: number) => Expression<SqlBool>;
  const pick = skipLocked(
    db,
    k
      .selectFrom(table)
      .select(key.map((c) => `${table}.${c}`))
      .where((eb) => expired(eb, cutoff))
      .orderBy(`${table}.${String(target.order)}`)
      .limit(limit),
  );
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the loose builder of `loose` above
  const picked = (eb: ExpressionBuilder<any, any>) =>
    key.length === 1 ? eb(key[0]!, 'in', pick) : eb(eb.refTuple(...(key as [string, string])), 'in', pick as never);
  if (target.retire !== undefined) {
    const r = await k
      .updateTable(table)
      .set({ [target.retire]: now })
      .where(picked)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
  const r = await k.deleteFrom(table).where(picked).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Rows of a live document (a draft, or in progress) stay; every other status is final. */
export const LIVE_DOCUMENT_STATUSES = ['draft', 'in_progress'] as const;

/** True when the document named by `column` (a documents.id, or null) is absent, null or no longer live. */
export function noLiveDocument<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: string,
): Expression<SqlBool> {
  const e = eb as unknown as ExpressionBuilder<Database, 'documents'>;
  return e.not(
    e.exists(
      e
        .selectFrom('documents as live_doc')
        .select('live_doc.id')
        .whereRef('live_doc.id', '=', column as never)
        .where('live_doc.status', 'in', LIVE_DOCUMENT_STATUSES),
    ),
  );
}
