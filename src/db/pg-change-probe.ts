// The change probe for PostgreSQL (the SQLite one is in db.ts), for the same exact caches (exact-cache.ts).
// Guarantees:
// - This process's own writes: the version moves when a statement other than a SELECT that names a watched table
//   completes on the pool, and again when that connection's transaction commits or rolls back, before the caller
//   sees the result. A change made through this process is therefore seen by the very next request (exact, as on
//   SQLite); writes elsewhere (deliveries, the key-use audit) leave the caches alone.
// - Other processes' writes: migration 008's triggers NOTIFY at commit and the version moves when the notice
//   arrives on a dedicated LISTEN connection (milliseconds on one network).
// - While that connection is not known to be alive, the version is null and nothing is served from memory: it is
//   checked every HEARTBEAT_MS, and an answer later than STALE_AFTER_MS, a lost connection or missing triggers (a
//   schema not yet migrated) turn caching off until a fresh connection has LISTENed again. So a change committed
//   elsewhere is never served stale for longer than STALE_AFTER_MS, even when notices stop.
import pg from 'pg';
import type { ChangeProbe } from './db.js';
import { NOTIFY_CHANNEL, NOTIFY_TRIGGERS } from './migrations/008-change-notices.js';
import { WORK_CHANNEL } from './migrations/018-work-notices.js';

export const HEARTBEAT_MS = 250;
/** The LISTEN connection's application_name, as pg_stat_activity shows it. */
export const LISTENER_NAME = 'signet-change-notices';
// The tables migration 008 watches (what the caches hold); statements and transactions touching others move nothing.
const WATCHED_TABLE = /\b(api_keys|workspaces|hooks)\b/;
const READ_ONLY = /^\s*select\b/i;
const TRANSACTION_END = /^\s*(commit|rollback|end|abort)\b/i;
export const STALE_AFTER_MS = 750;

const TRIGGERS_PRESENT = {
  text: 'select count(*)::int as n from pg_trigger where tgname = any($1)',
  values: [[...NOTIFY_TRIGGERS]],
};

export type PgChangeProbe = ChangeProbe & {
  /** Wraps a pool so that its completed writes move the version. */
  watch(pool: pg.Pool): void;
  /** Calls `listener` with the table's name for each work notice (migration 018) on the same LISTEN connection. */
  watchWork(listener: (table: string) => void): () => void;
  close(): Promise<void>;
};

type Logger = { warn(obj: object, msg: string): void };

export function pgChangeProbe(url: string, logger?: Logger): PgChangeProbe {
  let gen = 0;
  let live = false;
  let closed = false;
  let client: pg.Client | null = null;
  let askedAt = 0; // when the pending heartbeat was sent (0: none pending)
  let warned = false;
  const workListeners = new Set<(table: string) => void>();

  const lost = (why: unknown) => {
    live = false;
    gen++;
    const c = client;
    client = null;
    askedAt = 0;
    if (c) c.end().catch(() => {});
    if (!warned && !closed) {
      warned = true;
      logger?.warn({ err: why }, 'change notices lost: caches off until they are back');
    }
  };

  const connect = async () => {
    const c = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: STALE_AFTER_MS * 2,
      application_name: LISTENER_NAME,
    });
    c.on('error', (err) => client === c && lost(err));
    c.on('end', () => client === c && lost(new Error('connection ended')));
    c.on('notification', (n) => {
      if (n.channel !== WORK_CHANNEL) return void gen++;
      for (const l of workListeners) l(n.payload ?? '');
    });
    client = c;
    try {
      await c.connect();
      await c.query(`listen ${NOTIFY_CHANNEL}; listen ${WORK_CHANNEL}`);
    } catch (err) {
      if (client === c) lost(err);
      else c.end().catch(() => {});
    }
  };

  const beat = () => {
    if (closed) return;
    const c = client;
    if (c === null) return void connect();
    if (askedAt !== 0) {
      if (performance.now() - askedAt > STALE_AFTER_MS) lost(new Error('heartbeat unanswered'));
      return;
    }
    askedAt = performance.now();
    c.query<{ n: number }>(TRIGGERS_PRESENT).then(
      (r) => {
        if (client !== c) return;
        const fresh = performance.now() - askedAt <= STALE_AFTER_MS;
        askedAt = 0;
        const ok = fresh && r.rows[0]!.n === NOTIFY_TRIGGERS.length;
        if (ok && !live) {
          gen++; // anything cached before this connection listened may have missed notices
          warned = false;
        }
        live = ok;
      },
      (err) => client === c && lost(err),
    );
  };

  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  beat();

  return {
    version: () => (live ? gen : null),
    watch(pool) {
      pool.on('connect', (pc) => {
        const query = pc.query.bind(pc) as (...args: unknown[]) => unknown;
        let dirty = false; // a statement on a watched table ran since this connection's last commit or rollback
        (pc as { query: unknown }).query = (...args: unknown[]) => {
          const first = args[0] as string | { text?: string } | undefined;
          const text = typeof first === 'string' ? first : (first?.text ?? '');
          const touches = WATCHED_TABLE.test(text) && !READ_ONLY.test(text);
          const ends = TRANSACTION_END.test(text);
          if (!touches && !(ends && dirty)) return query(...args);
          dirty = touches && !ends;
          const result = query(...args);
          if (!(result instanceof Promise)) {
            gen++; // a cursor or callback form: counted as it starts (and its commit counts again)
            return result;
          }
          const moved = () => void gen++;
          result.then(moved, moved);
          return result;
        };
      });
    },
    watchWork(listener) {
      workListeners.add(listener);
      return () => void workListeners.delete(listener);
    },
    async close() {
      closed = true;
      live = false;
      clearInterval(timer);
      const c = client;
      client = null;
      if (c) await c.end().catch(() => {});
    },
  };
}
