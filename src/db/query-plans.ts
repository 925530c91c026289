// Reads the database's plan for a captured statement and names every full scan of a table in it, for the plan test
// (query-plans.test.ts). Dialect-specific, so it lives in db/.
import { CompiledQuery } from 'kysely';
import type { CapturedStatement, Db } from './db.js';

/** A table the plan reads whole: `how` is the plan's own words ("SCAN documents", "Seq Scan on documents"). */
export type FullScan = { table: string; how: string };

/** Statements that have no plan worth reading: transaction control, DDL, pragmas, plain inserts. */
export function explainable(s: CapturedStatement): boolean {
  const head = s.sql.trimStart().slice(0, 12).toLowerCase();
  if (!/^(select|update|delete|insert|with)\b/.test(head)) return false;
  // An insert of values has no scan unless it selects (insert … select) or checks a conflict target with a where.
  return !(head.startsWith('insert') && !/\bselect\b/i.test(s.sql));
}

/**
 * The full scans in a statement's plan. SQLite: `EXPLAIN QUERY PLAN` lines "SCAN <table>" (with or without an
 * index: walking a whole index is reading the table) and a virtual table read without its MATCH. PostgreSQL:
 * `EXPLAIN (FORMAT JSON)` with sequential scans discouraged for this session (`enable_seqscan = off`), so a Seq Scan
 * that remains is one no index can replace, however small the test's tables; a whole-index walk outside a join with
 * no LIMIT above it counts too.
 */
export async function fullScans(db: Db, s: CapturedStatement, raw = false): Promise<FullScan[]> {
  if (db.dialect === 'sqlite') {
    const r = await db.kysely.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]),
    );
    const out: FullScan[] = [];
    if (raw) return r.rows.map((x) => ({ table: '', how: x.detail }));
    // SQLite names a table by its alias in the plan.
    const aliases = new Map([...s.sql.matchAll(/"(\w+)" as "(\w+)"/g)].map((m) => [m[2]!, m[1]!]));
    for (const { detail } of r.rows) {
      const m = /^SCAN (?!CONSTANT ROW)(\w+)(.*)$/.exec(detail);
      if (!m) continue;
      const [, name, rest] = m as unknown as [string, string, string];
      const table = aliases.get(name) ?? name;
      // "VIRTUAL TABLE INDEX n:…" — FTS5 puts M in its index string when a MATCH drives the read.
      if (/VIRTUAL TABLE INDEX \d+:.*M/.test(rest)) continue;
      out.push({ table, how: detail });
    }
    return out;
  }
  return db.kysely.connection().execute(async (c) => {
    await c.executeQuery(CompiledQuery.raw('set enable_seqscan = off'));
    try {
      const r = await c.executeQuery<{ 'QUERY PLAN': [{ Plan: PgPlan }] }>(
        CompiledQuery.raw(`explain (format json) ${s.sql}`, [...s.parameters]),
      );
      const out: FullScan[] = [];
      walk(r.rows[0]!['QUERY PLAN'][0].Plan, { limit: false, join: false }, out);
      return out;
    } finally {
      await c.executeQuery(CompiledQuery.raw('reset enable_seqscan'));
    }
  });
}

type PgPlan = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PgPlan[];
};

function walk(p: PgPlan, above: { limit: boolean; join: boolean }, out: FullScan[]): void {
  const table = p['Relation Name'];
  const type = p['Node Type'];
  if (table && type === 'Seq Scan') out.push({ table, how: `Seq Scan on ${table}` });
  // Inside a join the planner, costing tiny tables, may walk a whole index where it would look rows up at scale.
  if (table && /^Index (Only )?Scan$/.test(type) && !p['Index Cond'] && !above.limit && !above.join)
    out.push({ table, how: `${type} using ${p['Index Name']} on ${table} (no condition)` });
  const next = { limit: above.limit || type === 'Limit', join: above.join || /Join|Nested Loop/.test(type) };
  for (const c of p.Plans ?? []) walk(c, next, out);
}
