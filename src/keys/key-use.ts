// The key-use audit's recorder: one row per /v1 request made with a key, noted in memory by the gate and written in
// batches (one transaction every few seconds, and as soon as KEY_USE_FLUSH_AT rows wait), so a request never waits
// on a write. Guarantee: best effort, bounded. A crash loses the rows not yet written: at most one interval's worth
// (or up to KEY_USE_BUFFER_MAX rows while writes are failing); a clean shutdown (`close`) writes them. While writes
// fail (a database not yet migrated to 007, an outage) rows are kept and retried each interval; beyond
// KEY_USE_BUFFER_MAX rows the oldest are dropped and counted, and a warning says how many. Nothing here throws into a
// request, and rows hold no secret (key id, workspace id, masked IP, method, route pattern, status).
import type { Db } from '../db/db.js';
import { describeError, type Logger } from '../lib/logger.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { pruneJob, type PruneDeps } from '../jobs/prune.js';
import { insertKeyUses, KEY_USES_PRUNE, type KeyUseRow } from './key-uses.repo.js';

/** Rows waiting in memory at most (preallocated, about 50 bytes a row; the strings are shared); then the oldest go. */
export const KEY_USE_BUFFER_MAX = 50_000;
/** A flush starts as soon as this many rows wait, without waiting for the timer. */
export const KEY_USE_FLUSH_AT = 1000;
/** Rows written in one transaction; a longer backlog takes several, one after the other. */
export const KEY_USE_BATCH_MAX = 2000;
export const KEY_USE_FLUSH_INTERVAL_MS = 5000;

export type KeyUseRecorder = {
  /** Called on the hot path: stores the values in preallocated columns, allocates nothing, never waits. */
  note(
    keyId: string,
    workspaceId: string,
    at: number,
    ipMasked: string | null,
    method: string,
    route: string,
    status: number,
  ): void;
  /** Writes what was noted before the call (as far as the database accepts it); never rejects. */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Rows waiting, and rows dropped since the start because the buffer was full. */
  stats(): { pending: number; dropped: number };
};

export type KeyUseRecorderOptions = {
  intervalMs?: number;
  flushAt?: number;
  max?: number;
  batchMax?: number;
  logger?: Logger;
};

export function createKeyUseRecorder(db: Db, opts: KeyUseRecorderOptions = {}): KeyUseRecorder {
  const cap = opts.max ?? KEY_USE_BUFFER_MAX;
  const flushAt = opts.flushAt ?? KEY_USE_FLUSH_AT;
  const batchMax = opts.batchMax ?? KEY_USE_BATCH_MAX;
  const logger = opts.logger;

  // A ring of `cap` rows in parallel columns: `size` rows from `head` on, oldest first.
  const keyIds = new Array<string>(cap).fill('');
  const workspaceIds = new Array<string>(cap).fill('');
  const ips = new Array<string | null>(cap).fill(null);
  const methods = new Array<string>(cap).fill('');
  const routes = new Array<string>(cap).fill('');
  const ats = new Float64Array(cap);
  const statuses = new Uint16Array(cap);
  let head = 0;
  let size = 0;
  let dropped = 0;
  let reportedDropped = 0;

  let flushing: Promise<void> = Promise.resolve();
  /** Flushes started and not finished (each waits for the one before). */
  let queued = 0;
  let failing = false;
  let soon = false;

  const put = (i: number, r: KeyUseRow): void => {
    keyIds[i] = r.key_id;
    workspaceIds[i] = r.workspace_id;
    ats[i] = r.at;
    ips[i] = r.ip_masked;
    methods[i] = r.method;
    routes[i] = r.route;
    statuses[i] = r.status;
  };

  /** Takes up to `max` of the oldest rows out of the ring. */
  function take(max: number): KeyUseRow[] {
    const n = Math.min(size, max);
    const rows = new Array<KeyUseRow>(n);
    for (let j = 0; j < n; j++) {
      const i = (head + j) % cap;
      rows[j] = {
        key_id: keyIds[i]!,
        workspace_id: workspaceIds[i]!,
        at: ats[i]!,
        ip_masked: ips[i]!,
        method: methods[i]!,
        route: routes[i]!,
        status: statuses[i]!,
      };
    }
    head = (head + n) % cap;
    size -= n;
    return rows;
  }

  /** Puts rows that could not be written back in front, as many as fit; the oldest of them go first. */
  function putBack(rows: KeyUseRow[]): void {
    const k = Math.min(rows.length, cap - size);
    for (let j = rows.length - 1; j >= rows.length - k; j--) {
      head = head === 0 ? cap - 1 : head - 1;
      put(head, rows[j]!);
      size++;
    }
    dropped += rows.length - k;
  }

  /** One transaction; the rows written, or -1 when the write failed (the rows are back in the ring). */
  async function writeOnce(): Promise<number> {
    const rows = take(batchMax);
    try {
      await db.kysely.transaction().execute((trx) => insertKeyUses(trx, rows));
    } catch (err) {
      putBack(rows);
      if (!failing) {
        failing = true;
        logger?.warn(
          { err: describeError(err), pending: size },
          'key-use audit: writing failed; rows are kept in memory and retried',
        );
      }
      return -1;
    }
    if (failing) {
      failing = false;
      logger?.info({ pending: size }, 'key-use audit: writing again');
    }
    return rows.length;
  }

  async function drain(): Promise<void> {
    try {
      let left = size;
      while (left > 0) {
        const n = await writeOnce();
        if (n < 0) break;
        left -= n;
      }
      if (dropped > reportedDropped) {
        logger?.warn(
          { dropped: dropped - reportedDropped, total: dropped, max: cap },
          'key-use audit: rows dropped, the buffer was full',
        );
        reportedDropped = dropped;
      }
    } catch {
      // Nothing above throws on purpose; a flush must never reject.
    } finally {
      queued--;
    }
  }

  const flush = (): Promise<void> => {
    queued++;
    flushing = flushing.then(drain);
    return flushing;
  };
  const flushSoon = (): void => {
    soon = false;
    if (queued === 0) void flush();
  };

  const timer = setInterval(() => {
    if (queued === 0 && size > 0) void flush();
  }, opts.intervalMs ?? KEY_USE_FLUSH_INTERVAL_MS);
  timer.unref();

  return {
    note(keyId, workspaceId, at, ipMasked, method, route, status) {
      let i: number;
      if (size === cap) {
        // Full: the newest row takes the oldest one's place.
        i = head;
        head = head + 1 === cap ? 0 : head + 1;
        dropped++;
      } else {
        i = head + size;
        if (i >= cap) i -= cap;
        size++;
      }
      keyIds[i] = keyId;
      workspaceIds[i] = workspaceId;
      ats[i] = at;
      ips[i] = ipMasked;
      methods[i] = method;
      routes[i] = route;
      statuses[i] = status;
      // Early flush, off this call stack; not while one is running, nor while writes fail (the timer retries then).
      if (size >= flushAt && !soon && queued === 0 && !failing) {
        soon = true;
        setImmediate(flushSoon);
      }
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
      if (size > 0) logger?.warn({ unwritten: size }, 'key-use audit: closing with rows not written');
    },
    stats: () => ({ pending: size, dropped }),
  };
}

/** Hourly: rows past their retention (30 days by default) are deleted in batches. */
export const pruneKeyUsesJob = (deps: PruneDeps, batchRows?: number): ScheduledJob =>
  pruneJob(deps, { targets: [KEY_USES_PRUNE], retention: 'keyUsesMs', needs: '007-dashboard' }, batchRows);
