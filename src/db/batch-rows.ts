// A batch of rows as a table inside one statement whose text does not depend on the batch's size: one array
// parameter per column on PostgreSQL (`unnest`), one JSON parameter on SQLite (`json_each`). Kysely then compiles, and
// the database parses (SQLite: prepares once, from the statement cache), the same short statement for 1 row or 400,
// where a VALUES list made rows × columns parameters and a new statement text per batch size.
import { PostgresAdapter, sql, type QueryExecutor, type RawBuilder } from 'kysely';

/** SQL types of a batch's columns (CAST names both databases read alike). */
export type ColumnType = 'text' | 'integer' | 'bigint';

/** A column of the batch: its name in the derived table, and its type. */
export type BatchColumn = readonly [name: string, type: ColumnType];

const NAME = /^[a-z_][a-z0-9_]*$/;

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
  const names = sql.raw(columns.map(([name]) => name).join(', '));
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const arrays = columns.map(([, type], i) => sql`${rows.map((r) => r[i] ?? null)}::${sql.raw(type)}[]`);
    return sql`unnest(${sql.join(arrays)}) AS ${sql.raw(alias)}(${names})`;
  }
  const cells = columns.map(([name, type], i) => sql.raw(`CAST(value ->> ${i} AS ${type}) AS ${name}`));
  return sql`(SELECT ${sql.join(cells)} FROM json_each(${JSON.stringify(rows)})) AS ${sql.raw(alias)}`;
}
