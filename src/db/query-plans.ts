// Reads the database's plan for a captured statement and names every full scan of a table in it, for the plan test
// (query-plans.test.ts). Dialect-specific, so it lives in db/.
import { CompiledQuery } from 'kysely';
import type { CapturedStatement, Db } from './db.js';

/** A table the plan reads whole: `how` is the plan's own words ("SCAN documents", "Seq Scan on documents"). */
export type FullScan = { table: string; how: string };

/** One step of a plan: SQLite's `detail` line, or a PostgreSQL node as "<Node Type> on <table> [<Index Cond>]". */
export type PlanStep = { table?: string; how: string; fullScan: boolean };

/** Statements that have a plan worth reading: reads, updates, deletes, and inserts that select. */
export function explainable(s: CapturedStatement): boolean {
  const head = s.sql.trimStart().slice(0, 12).toLowerCase();
  if (!/^(select|update|delete|insert|with)\b/.test(head)) return false;
  return !(head.startsWith('insert') && !/\bselect\b/i.test(s.sql));
}

/**
 * A statement's plan, read with its own parameters. SQLite: `EXPLAIN QUERY PLAN`; a line "SCAN <table>" (with or
 * without an index: walking a whole index is reading the table) is a full scan, and so is a virtual table read
 * without its MATCH. PostgreSQL: `EXPLAIN (FORMAT JSON)` with sequential scans discouraged for this session
 * (`enable_seqscan = off`), so a Seq Scan that remains is one no index can replace, however small the test's tables;
 * so is a whole-index walk outside a join with no LIMIT above it.
 */
export async function planOf(db: Db, s: CapturedStatement): Promise<PlanStep[]> {
  if (db.dialect === 'sqlite') {
    const r = await db.kysely.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]),
    );
    // SQLite names a table by its alias in the plan.
    const aliases = new Map([...s.sql.matchAll(/"(\w+)" as "(\w+)"/g)].map((m) => [m[2]!, m[1]!]));
    // A VALUES list or subquery named by an alias (`(…) as v`), or json_each over a parameter (a batch of rows,
    // batch-rows.ts), is the statement's own rows, not a table.
    const derived = new Set([...s.sql.matchAll(/\)\s+as\s+"?(\w+)"?/gi)].map((m) => m[1]!)).add('json_each');
    return r.rows.map(({ detail }) => {
      const m = /^(?:SCAN|SEARCH) (?!(?:\d+ )?CONSTANT ROW)(\w+)/.exec(detail);
      const table = m && !derived.has(m[1]!) ? (aliases.get(m[1]!) ?? m[1]!) : undefined;
      // "VIRTUAL TABLE INDEX n:…": FTS5 puts M in its index string when a MATCH drives the read.
      const fullScan = !!table && detail.startsWith('SCAN') && !/VIRTUAL TABLE INDEX \d+:.*M/.test(detail);
      return { ...(table ? { table } : {}), how: detail, fullScan };
    });
  }
  return withSetting(db, 'enable_seqscan', 'off', (c) => pgPlan(c, `explain (format json) ${s.sql}`, s.parameters));
}

/** One connection of the pool, as Kysely hands it to `connection().execute`. */
type Connection = Db['kysely'];

/** Runs `run` on one connection with `name` set to `value`, reset afterwards whatever happens. */
function withSetting<T>(db: Db, name: string, value: string, run: (c: Connection) => Promise<T>): Promise<T> {
  return db.kysely.connection().execute(async (c) => {
    await c.executeQuery(CompiledQuery.raw(`set ${name} = ${value}`));
    try {
      return await run(c);
    } finally {
      await c.executeQuery(CompiledQuery.raw(`reset ${name}`));
    }
  });
}

/** The steps of the plan an `EXPLAIN (FORMAT JSON)` statement returns. */
async function pgPlan(c: Connection, explain: string, parameters: readonly unknown[] = []): Promise<PlanStep[]> {
  const r = await c.executeQuery<{ 'QUERY PLAN': [{ Plan: PgPlan }] }>(CompiledQuery.raw(explain, [...parameters]));
  const out: PlanStep[] = [];
  walk(r.rows[0]!['QUERY PLAN'][0].Plan, { limit: false, join: false }, out);
  return out;
}

/**
 * The plan PostgreSQL keeps for a named statement (pg-prepared.ts) once it stops planning each run afresh (after five
 * runs, its generic plan: the parameters unknown), with sequential scans allowed, as a worker runs it. PostgreSQL only.
 */
export async function genericPlanOf(db: Db, s: CapturedStatement): Promise<PlanStep[]> {
  if (db.dialect !== 'postgres') throw new Error('genericPlanOf: PostgreSQL only');
  return withSetting(db, 'plan_cache_mode', 'force_generic_plan', async (c) => {
    await c.executeQuery(CompiledQuery.raw(`prepare signet_generic_probe as ${s.sql}`));
    try {
      // EXPLAIN EXECUTE takes its arguments as literals (no bind parameters); a generic plan does not read them.
      return await pgPlan(
        c,
        `explain (format json) execute signet_generic_probe(${s.parameters.map(literal).join(', ')})`,
      );
    } finally {
      await c.executeQuery(CompiledQuery.raw('deallocate signet_generic_probe'));
    }
  });
}

const literal = (v: unknown): string =>
  v === null || v === undefined
    ? 'NULL'
    : typeof v === 'number' || typeof v === 'bigint'
      ? String(v)
      : `'${String(v).replace(/'/g, "''")}'`;

export async function fullScans(db: Db, s: CapturedStatement): Promise<FullScan[]> {
  return (await planOf(db, s)).filter((p) => p.fullScan).map((p) => ({ table: p.table!, how: p.how }));
}

type PgPlan = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PgPlan[];
};

function walk(p: PgPlan, above: { limit: boolean; join: boolean }, out: PlanStep[]): void {
  const table = p['Relation Name'];
  const type = p['Node Type'];
  const cond = p['Index Cond'];
  const how = `${type}${p['Index Name'] ? ` using ${p['Index Name']}` : ''}${table ? ` on ${table}` : ''}`;
  // Inside a join the planner, costing tiny tables, may walk a whole index where it would look rows up at scale.
  const wholeIndex = /^Index (Only )?Scan$/.test(type) && !cond && !above.limit && !above.join;
  out.push({
    ...(table ? { table } : {}),
    how: cond ? `${how} (${cond})` : wholeIndex ? `${how} (no condition)` : how,
    fullScan: !!table && (type === 'Seq Scan' || wholeIndex),
  });
  const next = { limit: above.limit || type === 'Limit', join: above.join || /Join|Nested Loop/.test(type) };
  for (const c of p.Plans ?? []) walk(c, next, out);
}

/**
 * The statements inside the database's triggers, which a statement's own plan does not show: SQLite's trigger
 * bodies, each `old.x` / `new.x` a parameter (bound to null; the plan does not depend on it). PostgreSQL's triggers
 * here only call pg_notify (migrations 008 and 018): none.
 */
export async function triggerStatements(db: Db): Promise<(CapturedStatement & { trigger: string })[]> {
  if (db.dialect !== 'sqlite') return [];
  const r = await db.kysely.executeQuery<{ name: string; sql: string }>(
    CompiledQuery.raw(`select name, sql from sqlite_master where type = 'trigger'`),
  );
  return r.rows.flatMap(({ name, sql }) => {
    const body = /\bbegin\b([\s\S]*)\bend\s*$/i.exec(sql.trim())?.[1] ?? '';
    return body
      .split(';')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => {
        const parameters: unknown[] = [];
        const text = s.replace(/\b(?:old|new)\.\w+/gi, () => (parameters.push(null), '?'));
        return { trigger: name, sql: text, parameters };
      });
  });
}
