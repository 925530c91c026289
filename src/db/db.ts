// The only module that branches on the database. Everything else talks Kysely to `Db.kysely`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  sql,
  type LogConfig,
  type RawBuilder,
  type SelectQueryBuilder,
  type SqliteDatabase,
} from 'kysely';
import type { Database as Schema } from './schema.js';
import { migrateToLatest } from './migrate.js';
import { poolSizeFor, type Config } from '../config.js';
import { RollbackHooks, WaitingSqliteDialect } from './sqlite-driver.js';

export type Dialect = 'sqlite' | 'postgres';

export type Db = {
  kysely: Kysely<Schema>;
  dialect: Dialect;
  /** Tells whether anything may have changed, for exact caches (exact-cache.ts); PostgreSQL's: pg-change-probe.ts. */
  probe: ChangeProbe | null;
  /**
   * Calls `listener` soon after another process may have committed work for the lease runners: on PostgreSQL with the
   * table's name (migration 018's notices), on SQLite with null after any other connection's commit (the file's
   * data_version, read every WORK_POLL_MS). Returns the unsubscribe.
   */
  watchWork(listener: (table: string | null) => void): () => void;
  /**
   * SQLite only (null on PostgreSQL, where a blob is a row of the transaction): runs `undo` if the transaction open
   * on this process's connection rolls back; outside a transaction it does nothing (sqlite-driver.ts).
   */
  onRollback: ((undo: () => Promise<void>) => void) | null;
  close(): Promise<void>;
};

/**
 * Where blobs (PDFs, signature images) live: files under DATA_DIR beside the embedded SQLite default; rows in the
 * database on PostgreSQL, where instances share the database but no disk, and a blob written in a transaction must
 * commit with it.
 */
export const blobHome = (db: Db): 'files' | 'database' => (db.dialect === 'postgres' ? 'database' : 'files');

/** The SQLite file a DATABASE_URL names (`:memory:` for none), or null for PostgreSQL (whose blobs are rows). */
export const sqliteFileOf = (url: string): string | null =>
  url.startsWith('sqlite:') ? url.slice('sqlite:'.length) || ':memory:' : null;

/** One statement as sent to the database, with its parameters. */
export type CapturedStatement = { sql: string; parameters: readonly unknown[] };

let captureSink: ((s: CapturedStatement) => void) | null = null;

/**
 * Test-only (db/query-plans.test.ts): every database opened while a sink is set hands each statement it runs to the
 * sink. With none set (always, outside that test) no log hook is installed, so the switch costs nothing.
 */
export function captureStatements(sink: ((s: CapturedStatement) => void) | null): void {
  captureSink = sink;
}

const captureLog = (): LogConfig | undefined => {
  const sink = captureSink;
  if (!sink) return undefined;
  return (e) => {
    if (e.level === 'query') sink({ sql: e.query.sql, parameters: e.query.parameters });
  };
};

/**
 * The text index a substring search can use: SQLite's FTS5 table `document_search` (trigram; 016, its rows by
 * creation since 025), or PostgreSQL's GIN indexes of time-keyed 3-character pieces (026).
 */
export const substringIndex = (db: Db): 'fts5' | 'pg_keys' => (db.dialect === 'sqlite' ? 'fts5' : 'pg_keys');
/** The migration a search needs before it reads the text index (SQLite: 025, whose row ids its windows read). */
export const substringIndexMigration = (db: Db) =>
  db.dialect === 'sqlite' ? ('025-search-rows' as const) : ('026-search-keys' as const);

/** openDb's options as the process's configuration sets them (the server, the worker and the CLI alike). */
export const dbOptions = (c: Pick<Config, 'autoMigrate' | 'databasePoolMax' | 'databasePreparedStatements'>) => ({
  migrate: c.autoMigrate,
  poolMax: c.databasePoolMax,
  preparedStatements: c.databasePreparedStatements,
});

/**
 * `poolMax`: PostgreSQL connections (Config.databasePoolMax; default poolSizeFor this machine's cores);
 * `preparedStatements`: marked statements by name on PostgreSQL (Config.databasePreparedStatements; default on).
 */
export async function openDb(
  url: string,
  opts: { migrate?: boolean; poolMax?: number; preparedStatements?: boolean } = {},
): Promise<Db> {
  let db: Db;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length) || ':memory:';
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    // Each driver loads only when its database is used.
    const { default: Sqlite } = await import('better-sqlite3');
    const sqlite = new Sqlite(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // For the pragmas below; the driver then waits for the write lock itself (sqlite-driver.ts).
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    // The page cache may grow to SQLITE_CACHE_KIB (2 MB by default): a large history's index pages stay in it instead
    // of being read again from the OS on every request (BENCHMARKS.md, issue 25). It fills only as pages are read.
    sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
    let writes = 0;
    const database = cachingPrepare(sqlite, STATEMENT_CACHE_SIZE, () => void writes++);
    const hooks = new RollbackHooks();
    const kysely = new Kysely<Schema>({
      dialect: new WaitingSqliteDialect({ database }, sqlite, hooks),
      log: captureLog(),
    });
    db = {
      kysely,
      dialect: 'sqlite',
      onRollback: (undo) => hooks.onRollback(undo),
      probe: sqliteChangeProbe(sqlite, () => writes),
      watchWork: sqliteWorkWatch(sqlite),
      close: () => kysely.destroy(),
    };
  } else {
    const [{ default: pg }, { pgChangeProbe }, { prepareMarked }] = await Promise.all([
      import('pg'),
      import('./pg-change-probe.js'),
      import('./pg-prepared.js'),
    ]);
    // int8 (bigint) columns hold millisecond timestamps, well inside Number's safe range.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    // A connection is waited for at most 2 s: while the server is away requests fail fast (503) instead of queueing.
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolMax ?? poolSizeFor(os.availableParallelism()),
      connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
    });
    // An idle client whose server went away (restart, failover) is dropped by the pool; without a listener the
    // pool's 'error' event would end the process.
    pool.on('error', () => {});
    // The pool listens for errors only on idle clients. A checked-out client that is between statements (in a
    // transaction, or held by a connection() callback) when the server goes away emits 'error' with no listener,
    // which would end the process; its next statement fails instead (503), and the pool drops it on release.
    pool.on('connect', (client) => client.on('error', () => {}));
    if (opts.preparedStatements !== false) prepareMarked(pool);
    const probe = pgChangeProbe(url);
    probe.watch(pool);
    const kysely = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }), log: captureLog() });
    db = {
      kysely,
      dialect: 'postgres',
      onRollback: null,
      probe,
      watchWork: (listener) => probe.watchWork(listener),
      close: async () => {
        await probe.close();
        await kysely.destroy();
      },
    };
  }
  if (opts.migrate !== false) await migrateToLatest(db);
  return db;
}

export const STATEMENT_CACHE_SIZE = 500;
/** The SQLite page cache's ceiling, in KiB (openDb; the seeder's fastWrites restores it). */
export const SQLITE_CACHE_KIB = 65_536;
export const POOL_CONNECT_TIMEOUT_MS = 2_000;

// PostgreSQL's connection-exception class (08), shutdown and start-up states (57P01-03), too many connections.
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/;

/**
 * True when an error says the database cannot be reached right now (down, restarting, out of connections), as
 * opposed to a fault of the statement: the request may succeed if retried later.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_SQLSTATE.test(e.code) || UNAVAILABLE_ERRNO.has(e.code))) return true;
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message);
}

// No space left: the file system (ENOSPC, or a quota), SQLite's own "database or disk is full", PostgreSQL's disk_full.
const OUT_OF_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']);

/**
 * True when a write failed for lack of storage space (a blob file or the database). Nothing of the write remains (a
 * transaction rolls back; a blob's temp file is removed), and the same request may succeed once space is freed.
 */
export function isOutOfSpace(err: unknown): boolean {
  const e = err as { code?: unknown } | null;
  return e !== null && typeof e === 'object' && typeof e.code === 'string' && OUT_OF_SPACE_CODES.has(e.code);
}

type Prepared = Pick<Database.Statement, 'reader' | 'busy' | 'all' | 'run' | 'iterate'>;

/**
 * The database Kysely sees:
 * - `prepare` memoised by SQL text (LRU, `max` entries): Kysely's SqliteDriver prepares every query afresh, which
 *   cost more than running it. Safe because Kysely serialises the single connection with a mutex and runs
 *   `all`/`run` to completion synchronously; only `streamQuery` leaves a statement mid-`iterate`, and a statement
 *   found busy that way is never handed out again until it is done.
 * - `onWrite` is called after every successful run of a statement that can write (a failed statement writes
 *   nothing: SQLite undoes it), and before a streamed one; this connection has no other way in, so this counts
 *   all of its own writes.
 */
export function cachingPrepare(
  sqlite: Database.Database,
  max = STATEMENT_CACHE_SIZE,
  onWrite?: () => void,
): SqliteDatabase {
  const cache = new Map<string, Prepared>();
  const prepare = (sql: string): Prepared => {
    const stmt = sqlite.prepare(sql);
    return onWrite && !stmt.readonly ? countingWrites(stmt, onWrite) : stmt;
  };
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const hit = cache.get(sql);
      if (hit !== undefined) {
        if (hit.busy) return prepare(sql);
        cache.delete(sql);
        cache.set(sql, hit);
        return hit;
      }
      const stmt = prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

function countingWrites(stmt: Database.Statement, onWrite: () => void): Prepared {
  return {
    reader: stmt.reader,
    get busy() {
      return stmt.busy;
    },
    all(...params: unknown[]) {
      const rows = stmt.all(...params);
      onWrite();
      return rows;
    },
    run(...params: unknown[]) {
      const result = stmt.run(...params);
      onWrite();
      return result;
    },
    iterate(...params: unknown[]) {
      onWrite();
      return stmt.iterate(...params);
    },
  } as Prepared;
}

/**
 * Tells whether anything may have changed in a SQLite file, for exact in-process caches. `version()` moves whenever
 * `PRAGMA data_version` does (a commit by another connection, any process) or this connection ran a statement that
 * can write (counted by `cachingPrepare`, committed or not; data_version ignores this connection's own commits).
 * Inside a transaction on this connection the reading would describe that transaction, so `version()` is null:
 * read the database.
 */
export type ChangeProbe = { version(): number | null };

function sqliteChangeProbe(sqlite: Database.Database, ownWrites: () => number): ChangeProbe {
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  let dv = -1;
  let ow = -1;
  let gen = 0;
  return {
    version() {
      if (sqlite.inTransaction || !sqlite.open) return null;
      try {
        const d = dataVersion.get() as number;
        const w = ownWrites();
        // Both only ever grow, so any difference from the last reading is a change.
        if (d !== dv || w !== ow) {
          dv = d;
          ow = w;
          gen++;
        }
        return gen;
      } catch {
        // e.g. the connection is busy mid-iterate: unknown, so not cacheable.
        return null;
      }
    },
  };
}

/** How often an idle SQLite process looks for other processes' commits (a data_version read, a few µs). */
export const WORK_POLL_MS = 10;

function sqliteWorkWatch(sqlite: Database.Database): Db['watchWork'] {
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  const listeners = new Set<(table: null) => void>();
  let seen = -1;
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    if (sqlite.inTransaction || !sqlite.open) return;
    let now: number;
    try {
      now = dataVersion.get() as number;
    } catch {
      return; // busy mid-iterate: look again next time
    }
    const moved = seen !== -1 && now !== seen;
    seen = now;
    if (moved) for (const l of listeners) l(null);
  };
  return (listener) => {
    listeners.add(listener);
    if (timer === undefined) {
      look();
      timer = setInterval(look, WORK_POLL_MS);
      timer.unref();
    }
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && timer !== undefined) {
        clearInterval(timer);
        timer = undefined;
      }
    };
  };
}

// Any select builder, whatever its tables and row type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own generic bound for "any builder"
type AnySelect = SelectQueryBuilder<any, any, any>;

/**
 * True where a `WITH` may hold a writing statement whose rows the rest of the statement reads (PostgreSQL), so two
 * dependent writes can be one statement, atomic without a transaction. SQLite has no such `WITH`.
 */
export const writingCtes = (db: Db): boolean => db.dialect === 'postgres';

/** skipLocked for a statement written as SQL: the clause, or nothing on SQLite. */
export const skipLockedClause = (db: Db): RawBuilder<unknown> =>
  db.dialect === 'postgres' ? sql` FOR UPDATE SKIP LOCKED` : sql``;

/**
 * A table named with the index its statement must use, where the database takes that (SQLite's `INDEXED BY`): for a
 * table that is small whenever statistics are taken and may hold a backlog later (a queue), which SQLite's planner
 * would otherwise scan. PostgreSQL: the table alone.
 */
export const indexedBy = (db: Db, table: string, index: string): RawBuilder<unknown> =>
  db.dialect === 'sqlite' ? sql`${sql.table(table)} INDEXED BY ${sql.ref(index)}` : sql.table(table);

/** `FOR UPDATE SKIP LOCKED` where the database has it; SQLite serialises writers, so it needs none. */
export function skipLocked<QB extends AnySelect>(db: Db, qb: QB): QB {
  return db.dialect === 'postgres' ? (qb.forUpdate().skipLocked() as QB) : qb;
}

/**
 * "No row of `table` has `key` in `column`", written so each statement reads the table once whatever the number of
 * keys tested: SQLite evaluates an uncorrelated `not in` once into a temporary index (a correlated `not exists` scans
 * an unindexed column per key); PostgreSQL plans `not exists` as an anti-join (its `not in` falls back to a scan per
 * key once the column outgrows work_mem).
 */
export function absentFrom(db: Db, key: RawBuilder<unknown>, table: string, column: string): RawBuilder<unknown> {
  return db.dialect === 'sqlite'
    ? sql`${key} not in (select ${sql.ref(column)} from ${sql.table(table)} where ${sql.ref(column)} is not null)`
    : sql`not exists (select 1 from ${sql.table(table)} t where t.${sql.ref(column)} = ${key})`;
}

/**
 * Runs `run` where PostgreSQL walks an index in its order rather than collecting every match and sorting it (bitmap
 * scans off, for this transaction only). For a claim of the oldest N due rows: with stale statistics (a backlog that
 * arrived since the last ANALYZE) the planner expects a handful of due rows and reads and sorts all of them per
 * claim, which made draining a backlog quadratic in its size. SQLite: `run` as it is.
 */
export async function walkingIndexOrder<T>(db: Db, run: (k: Kysely<Schema>) => Promise<T>): Promise<T> {
  if (db.dialect !== 'postgres') return run(db.kysely);
  return db.kysely.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_bitmapscan = off`.execute(trx);
    return run(trx);
  });
}

/** `FOR UPDATE` where the database has it: serialises writers of one row. SQLite transactions are already serial. */
export function forUpdate<QB extends AnySelect>(db: Db, qb: QB): QB {
  return db.dialect === 'postgres' ? (qb.forUpdate() as QB) : qb;
}

/** True when an error is a unique-constraint violation, on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
