// Every column of every table that holds one of some strings: each text, JSON and binary column of each table
// (SQLite's FTS shadow tables included), read byte-wise, so a purge test can show a person's data is gone.
import { sql } from 'kysely';
import type { Db } from '../../db/db.js';

/** For each needle, the `table.column` names where it occurs, with how many rows hold it. */
export async function scanDatabase(db: Db, needles: string[]): Promise<Record<string, Record<string, number>>> {
  const found: Record<string, Record<string, number>> = Object.fromEntries(needles.map((n) => [n, {}]));
  for (const [table, column, type] of await columns(db)) {
    const c = sql.ref(column);
    const hit = (needle: string) =>
      db.dialect === 'sqlite'
        ? sql`instr(cast(${c} as blob), cast(${needle} as blob)) > 0`
        : type === 'bytea'
          ? sql`position(convert_to(${needle}, 'UTF8') in ${c}) > 0`
          : sql`strpos(${c}::text, ${needle}) > 0`;
    const counts = needles.map((n, i) => sql`sum(case when ${hit(n)} then 1 else 0 end) as ${sql.ref(`n${i}`)}`);
    const r = await sql<Record<string, number | null>>`select ${sql.join(counts)} from ${sql.table(table)}`.execute(
      db.kysely,
    );
    needles.forEach((n, i) => {
      const k = Number(r.rows[0]?.[`n${i}`] ?? 0);
      if (k > 0) found[n]![`${table}.${column}`] = k;
    });
  }
  return found;
}

async function columns(db: Db): Promise<[string, string, string][]> {
  if (db.dialect === 'sqlite') {
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db.kysely);
    const out: [string, string, string][] = [];
    for (const { name } of tables.rows) {
      const cols = await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(db.kysely);
      for (const c of cols.rows) out.push([name, c.name, '']);
    }
    return out;
  }
  const r = await sql<{ table_name: string; column_name: string; data_type: string }>`select table_name, column_name,
    data_type from information_schema.columns where table_schema = 'public'
    and data_type in ('text', 'character varying', 'json', 'jsonb', 'bytea')`.execute(db.kysely);
  return r.rows.map((x) => [x.table_name, x.column_name, x.data_type]);
}

/** How many times the audit log says document `id` was purged (a repeat or a second purger adds none). */
export const purgeRows = async (db: Db, id: string): Promise<number> =>
  (
    await db.kysely
      .selectFrom('audit_log')
      .select('id')
      .where('action', '=', 'document.purged')
      .where('target_id', '=', id)
      .execute()
  ).length;
