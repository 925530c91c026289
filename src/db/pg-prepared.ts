// Named prepared statements on PostgreSQL for the statements that ask for one. A statement ends with the PREPARED
// comment only when its text never varies with its input (the lease claims; the dispatcher's reads and record, whose
// rows go in one JSON parameter): each connection then parses it once and, after PostgreSQL's first runs, keeps one
// plan, where an unnamed statement was parsed, analysed and planned on every run (about 2 of the 46 µs a claimed
// and recorded delivery costs the backend; BENCHMARKS.md, issue 25). Guarantees: a text has one name, the same in
// every process (a hash of the text), so a connection never sees one name for two texts; at most MAX_NAMED texts get
// a name, the rest run unnamed as before; an unmarked statement is untouched; openDb's preparedStatements: false
// (DATABASE_PREPARED_STATEMENTS=0, for a pooler that moves sessions between server connections) names nothing.
// SQLite keeps its own statement cache (db.ts).
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Pool, PoolClient } from 'pg';

/** The comment that marks a statement for a name (a test finds the marked statements by it). */
export const PREPARED = '/* prepared */';
/** For a builder's `.modifyEnd(…)` or the end of a `sql` template. */
export const prepared = sql.raw(` ${PREPARED}`);

// Marked texts are a fixed set written in code; this only bounds a mistake (a marked text that varies).
const MAX_NAMED = 200;
const names = new Map<string, string>();

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `signet_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** Every client the pool opens runs marked statements by name. */
export function prepareMarked(pool: Pool): void {
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    // Kysely's driver calls query(text, values); a marked text goes as { name, text, values } instead.
    (client as { query: unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
      const name = typeof text === 'string' && text.endsWith(PREPARED) ? nameOf(text) : undefined;
      return name === undefined ? query(text, values, ...rest) : query({ name, text, values }, ...rest);
    };
  });
}
