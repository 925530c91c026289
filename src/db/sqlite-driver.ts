// Kysely's SQLite driver, made to wait for another process's write lock without stopping the event loop. SQLite's own
// busy handler sleeps inside the call, and better-sqlite3 is synchronous: a process waiting for the lock (two
// `signet worker`s, a worker beside the API, a CLI command) stood still with every request in flight.
// Guarantees:
// - Every transaction begins IMMEDIATE: it holds the write lock from BEGIN, so no statement inside it can meet another
//   writer (no SQLITE_BUSY halfway, no read snapshot that fails to become a write). Read-only transactions take the
//   lock too; on one connection per process they were serialised already.
// - A BEGIN, or a statement run outside a transaction, that finds the lock taken is retried on a timer (1 ms, doubling
//   to 8 ms) until it runs or BUSY_WAIT_MS have passed, then fails with SQLite's own error. A failed statement changed
//   nothing, so running it again is safe; a statement inside a transaction is never retried alone.
// - The connection's busy handler is off (busy_timeout 0) once this driver runs, so all waiting happens here.
// - A transaction SQLite already rolled back itself (after a full disk, say) is not rolled back again: the caller
//   sees the error that ended it.
// - What `onRollback` registered during a transaction runs after that transaction rolls back (its commit failing
//   included) and is forgotten when it commits: one connection per process holds one transaction at a time, so
//   "the open transaction" is unambiguous. Blob files written for it go this way (documents/blob-store.ts).
import type Database from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';

/** Undo steps for the transaction open on this process's connection (see the guarantees above). */
export class RollbackHooks {
  #open = false;
  #undo: (() => Promise<void>)[] = [];
  /** Registers `undo` for the open transaction; outside one there is nothing to undo and it is dropped. */
  onRollback(undo: () => Promise<void>): void {
    if (this.#open) this.#undo.push(undo);
  }
  begin(): void {
    this.#open = true;
    this.#undo = [];
  }
  committed(): void {
    this.#open = false;
    this.#undo = [];
  }
  async rolledBack(): Promise<void> {
    const undo = this.#undo;
    this.committed();
    // An undo step that fails leaves what the orphan check (blob-orphans.ts) finds; the rollback itself stands.
    for (const step of undo) await step().catch(() => undefined);
  }
}

/** How long a statement waits for another writer, in all; the same bound the busy handler had. */
export const BUSY_WAIT_MS = 5_000;

const isBusy = (err: unknown) => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function waitingConnection(sqlite: Database.Database, inner: DatabaseConnection): DatabaseConnection {
  return {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      // Only what starts outside a transaction may be run again: the statement itself, or the BEGIN.
      const retryable = !sqlite.inTransaction;
      let deadline = 0;
      for (let wait = 1; ; wait = Math.min(wait * 2, 8)) {
        try {
          return await inner.executeQuery<R>(query);
        } catch (err) {
          if (!retryable || !isBusy(err) || sqlite.inTransaction) throw err;
          deadline ||= performance.now() + BUSY_WAIT_MS;
          if (performance.now() >= deadline) throw err;
          await sleep(wait);
        }
      }
    },
    streamQuery: (query, chunkSize) => inner.streamQuery(query, chunkSize),
  };
}

class WaitingSqliteDriver implements Driver {
  readonly #inner: SqliteDriver;
  readonly #sqlite: Database.Database;
  #connection: { inner: DatabaseConnection; outer: DatabaseConnection } | undefined;

  readonly #hooks: RollbackHooks;

  constructor(config: SqliteDialectConfig, sqlite: Database.Database, hooks: RollbackHooks) {
    this.#inner = new SqliteDriver(config);
    this.#sqlite = sqlite;
    this.#hooks = hooks;
  }
  async init() {
    await this.#inner.init();
    this.#sqlite.pragma('busy_timeout = 0');
  }
  async acquireConnection() {
    const inner = await this.#inner.acquireConnection();
    if (this.#connection?.inner !== inner) {
      this.#connection = { inner, outer: waitingConnection(this.#sqlite, inner) };
    }
    return this.#connection.outer;
  }
  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings) {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    this.#hooks.begin();
  }
  commitTransaction = async (c: DatabaseConnection) => {
    await this.#inner.commitTransaction(c);
    this.#hooks.committed();
  };
  // SQLite rolls a transaction back by itself after some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM): a ROLLBACK
  // then fails with "no transaction is active" and would hide the error that caused it (a full disk became a 500).
  rollbackTransaction = async (c: DatabaseConnection) => {
    try {
      if (this.#sqlite.inTransaction) await this.#inner.rollbackTransaction(c);
    } finally {
      await this.#hooks.rolledBack();
    }
  };
  savepoint: SqliteDriver['savepoint'] = (c, name, compile) => this.#inner.savepoint(c, name, compile);
  rollbackToSavepoint: SqliteDriver['rollbackToSavepoint'] = (c, name, compile) =>
    this.#inner.rollbackToSavepoint(c, name, compile);
  releaseSavepoint: SqliteDriver['releaseSavepoint'] = (c, name, compile) =>
    this.#inner.releaseSavepoint(c, name, compile);
  releaseConnection = () => this.#inner.releaseConnection();
  destroy = () => this.#inner.destroy();
}

/** SqliteDialect with the waiting driver above, over `sqlite` (the handle behind `config.database`), reporting to `hooks`. */
export class WaitingSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #sqlite: Database.Database;
  readonly #hooks: RollbackHooks;
  constructor(config: SqliteDialectConfig, sqlite: Database.Database, hooks: RollbackHooks) {
    super(config);
    this.#config = config;
    this.#sqlite = sqlite;
    this.#hooks = hooks;
  }
  override createDriver(): Driver {
    return new WaitingSqliteDriver(this.#config, this.#sqlite, this.#hooks);
  }
}
