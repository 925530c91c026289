// Every byte a database holds in its tables, for "this secret is nowhere at rest" checks: every column of every row
// of every table (SQLite: sqlite_master's tables; PostgreSQL: the public schema's), text as UTF-8, blobs as bytes.
import { sql } from 'kysely';
import type { Db } from '../../db/db.js';

export async function databaseBytes(db: Db): Promise<Buffer> {
  const tables =
    db.dialect === 'sqlite'
      ? (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(db.kysely)).rows
      : (
          await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
            WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(db.kysely)
        ).rows;
  const out: Buffer[] = [];
  for (const { name } of tables) {
    const rows = (await sql<Record<string, unknown>>`SELECT * FROM ${sql.id(name)}`.execute(db.kysely)).rows;
    for (const row of rows) {
      for (const v of Object.values(row)) {
        if (Buffer.isBuffer(v) || v instanceof Uint8Array) out.push(Buffer.from(v));
        else if (v !== null && v !== undefined) out.push(Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)));
      }
    }
  }
  if (out.length < 10) throw new Error('the dump found almost nothing: is this the right database?');
  return Buffer.concat(out);
}
