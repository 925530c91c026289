// The only module that branches on the database. Everything else talks Kysely to `Db.kysely`.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SelectQueryBuilder } from 'kysely';
import pg from 'pg';
import type { Database as Schema } from './schema.js';
import { migrateToLatest } from './migrate.js';

export type Dialect = 'sqlite' | 'postgres';

export type Db = {
  kysely: Kysely<Schema>;
  dialect: Dialect;
  close(): Promise<void>;
};

// int8 (bigint) columns hold millisecond timestamps, well inside Number's safe range.
pg.types.setTypeParser(20, (v: string) => Number(v));

export async function openDb(url: string, opts: { migrate?: boolean } = {}): Promise<Db> {
  let db: Db;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length) || ':memory:';
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const sqlite = new Database(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    const kysely = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
    db = { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
  } else {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const kysely = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
    db = { kysely, dialect: 'postgres', close: () => kysely.destroy() };
  }
  if (opts.migrate !== false) await migrateToLatest(db);
  return db;
}

/** `FOR UPDATE SKIP LOCKED` where the database has it; SQLite serialises writers, so it needs none. */
export function skipLocked<QB extends SelectQueryBuilder<any, any, any>>(db: Db, qb: QB): QB {
  return db.dialect === 'postgres' ? (qb.forUpdate().skipLocked() as QB) : qb;
}

/** `FOR UPDATE` where the database has it: serialises writers of one row. SQLite transactions are already serial. */
export function forUpdate<QB extends SelectQueryBuilder<any, any, any>>(db: Db, qb: QB): QB {
  return db.dialect === 'postgres' ? (qb.forUpdate() as QB) : qb;
}

/** True when an error is a unique-constraint violation, on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
