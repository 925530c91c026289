// A batch of rows as a table inside one statement whose text does not depend on the batch's size: one JSON parameter
// (`jsonb_array_elements` on PostgreSQL, `json_each` on SQLite), each cell taken out by its position and cast. Kysely
// then compiles, and the database parses (SQLite: prepares once, from the statement cache), the same short statement
// for 1 row or 400, where a VALUES list made rows × columns parameters and a new statement text per batch size. One
// JSON.stringify per batch, where PostgreSQL's array parameters (one per column, `unnest`) were serialised by the
// driver cell by cell: about a seventh of a webhook worker's allocations (BENCHMARKS.md, issue 25).
import { PostgresAdapter, sql, type Expression, type QueryExecutor, type RawBuilder, type SqlBool } from 'kysely';

/** SQL types of a batch's columns (CAST names both databases read alike). */
export type ColumnType = 'text' | 'integer' | 'bigint';

/** A column of the batch: its name in the derived table, and its type. */
export type BatchColumn = readonly [name: string, type: ColumnType];

const NAME = /^[a-z_][a-z0-9_]*$/;
const LONE_SURROGATE_ESCAPE = /\\ud[89a-f]/;

/**
 * `rows` (one array of cells per row, in `columns`' order; JSON-safe values: strings, integers below 2^53, null) as the
 * derived table `alias`, for a FROM clause or an INSERT … SELECT. Column names come from code, never from input.
 */
export function batchRows(
  db: { getExecutor(): QueryExecutor },
  columns: readonly BatchColumn[],
  rows: readonly (readonly unknown[])[],
  alias = 'v',
): RawBuilder<unknown> {
  for (const [name] of [...columns, [alias] as const]) {
    if (!NAME.test(name)) throw new Error(`batchRows: bad name ${name}`);
  }
  let json = JSON.stringify(rows);
  // A lone surrogate (half of a UTF-16 pair, which JSON.stringify writes as a \ud800-\udfff escape) is not text
  // either database stores: U+FFFD instead, as a UTF-8 encoder writes. Rare, so looked for in the result.
  if (json.includes('\\ud') && LONE_SURROGATE_ESCAPE.test(json)) {
    json = JSON.stringify(rows.map((r) => r.map((v) => (typeof v === 'string' ? toWellFormed(v) : v))));
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const cells = columns.map(([name, type], i) => sql.raw(`(value ->> ${i})::${type} AS ${name}`));
    return sql`(SELECT ${sql.join(cells)} FROM jsonb_array_elements(${json}::jsonb)) AS ${sql.raw(alias)}`;
  }
  const cells = columns.map(([name, type], i) => sql.raw(`CAST(value ->> ${i} AS ${type}) AS ${name}`));
  return sql`(SELECT ${sql.join(cells)} FROM json_each(${json})) AS ${sql.raw(alias)}`;
}

// ES2024 string methods (Node 20 has them; the project's TypeScript lib is ES2022).
const toWellFormed = (v: string): string => (v as unknown as { toWellFormed(): string }).toWellFormed();

/**
 * "(`key`, `counter`) is one of `rows`", found by the key's index whatever the table's statistics say. PostgreSQL:
 * the keys of one JSON object `{key: counter}` as `= ANY`, and each row's counter read from it (a join with a batch
 * was planned as a nested loop over a scan of a small table); SQLite: a row value `IN` a batch (the caller names the
 * index: db.ts, indexedBy).
 */
export function keyedIn(
  db: { getExecutor(): QueryExecutor },
  [key, counter]: readonly [string, string],
  rows: readonly (readonly [string, number])[],
): RawBuilder<unknown> {
  for (const [k, n] of rows) {
    if (!Number.isInteger(n)) throw new Error(`keyedIn: counter ${n} of ${k} is not an integer`);
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // Written out rather than through an object of 400 new keys, which V8 builds as a chain of new hidden classes.
    const keyed = `{${rows.map(([k, n]) => `${JSON.stringify(k)}:${n}`).join(',')}}`;
    return sql`${sql.ref(key)} = ANY (ARRAY(SELECT jsonb_object_keys(${keyed}::jsonb)))
      AND ${sql.ref(counter)} = (${keyed}::jsonb ->> ${sql.ref(key)})::integer`;
  }
  const batch = batchRows(
    db,
    [
      ['k', 'text'],
      ['n', 'integer'],
    ],
    rows,
  );
  return sql`(${sql.ref(key)}, ${sql.ref(counter)}) IN (SELECT v.k, v.n FROM ${batch})`;
}

/**
 * "`column` is one of the keys `subquery` returns", each row then found by the column's index. PostgreSQL: the keys as
 * one array, evaluated once (`= ANY (ARRAY(…))`); its generic plan for `IN (…)`, which a named statement gets after
 * its first five runs, hashed the keys and scanned the whole table to join them (a lease claim read every queued
 * row). SQLite: `IN`.
 */
export function keyIn(
  db: { getExecutor(): QueryExecutor },
  column: string,
  subquery: Expression<unknown>,
): RawBuilder<SqlBool> {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql<SqlBool>`${sql.ref(column)} = ANY (ARRAY(${subquery}))`
    : sql<SqlBool>`${sql.ref(column)} IN (${subquery})`;
}
