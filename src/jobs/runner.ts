// The one runner of lease-claimed work: webhook deliveries, mail and sealing are each a LeaseJob run by it.
// Guarantees:
// - Items are claimed in batches with a lease (jobs/lease.repo.ts) and worked outside any transaction; a job
//   records an outcome only while it still holds the claim, so a runner that dies leaves leases that lapse and the
//   items are worked again by any runner (at least once).
// - An item is worked only while its lease outlasts the job's time limit by a margin; otherwise, and once stop()
//   was called, it is handed back at once for an immediate re-claim.
// - The background loop runs a pass, and when nothing was done sleeps (unref'd) until the poll interval passes or
//   wake() is called. stop() stops claiming, waits for work in flight and its records.
// - With `prefetch` the next batch is claimed while the current one is worked; every claimed item is still worked or
//   handed back, the prefetched batch included.
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { describeError, silentLogger, type Logger } from '../lib/logger.js';

/** Headroom between the longest work and the lease's end, for recording the outcome. */
export const LEASE_MARGIN_MS = 1_000;

export type Claimed = { claimExpiresAt: number };

export type LeaseJob<T extends Claimed> = {
  /** Claims up to `limit` due items for `workerId`, each leased until `now + leaseMs`. */
  claim(o: { now: number; workerId: string; leaseMs: number; limit: number }): Promise<T[]>;
  /** Works one item and records its outcome under the lease; true when it counts as done (sent, sealed). */
  work(item: T): Promise<boolean>;
  /** Hands an unworked item back, clearing its lease. */
  release(item: T): Promise<void>;
  /** Waits for outcomes written in the background (group commit); after every pass and at stop. */
  settle?(): Promise<void>;
};

export type RunnerOptions = {
  /** For log lines. */
  name: string;
  clock: Clock;
  /** Unique per process; claims are owned by it. */
  workerId: string;
  logger?: Logger;
  leaseMs: number;
  /** The longest one work() may take; the lease must outlast it by LEASE_MARGIN_MS. */
  timeoutMs: number;
  batchSize: number;
  /** Items of a batch worked at once. */
  concurrency: number;
  /** Real-time sleep of the background loop when a pass did nothing. */
  pollIntervalMs: number;
  /**
   * Claim the next batch while the current one is still being worked (once fewer than `batchSize` of its items are
   * left unstarted), so lanes never stand idle waiting for the batch's slowest item or for the claim. For many
   * short items (deliveries); a slow job keeps the default, claiming only what it is about to work.
   */
  prefetch?: boolean;
};

export type Runner = {
  /** Claims and works everything due now, batch by batch; resolves with how many items were done. */
  runOnce(): Promise<number>;
  start(): void;
  /** Ends the background loop's sleep now (new work was committed). */
  wake(): void;
  /** Final: stops claiming, hands back claimed items not yet worked, waits for work in flight and its records. */
  stop(): Promise<void>;
};

export function createRunner<T extends Claimed>(job: LeaseJob<T>, o: RunnerOptions): Runner {
  const { clock, workerId } = o;
  const logger = o.logger ?? silentLogger;
  if (o.leaseMs < o.timeoutMs + LEASE_MARGIN_MS) {
    throw new Error(
      `${o.name}: leaseMs (${o.leaseMs}) must exceed timeoutMs (${o.timeoutMs}) by at least ${LEASE_MARGIN_MS} ms`,
    );
  }

  let stopping = false;
  let stopped: Promise<void> | undefined;
  let loop: Promise<void> | undefined;
  let woken = false;
  let interruptSleep: (() => void) | undefined;
  const runs = new Set<Promise<number>>();

  async function one(item: T): Promise<boolean> {
    try {
      if (stopping || clock.now() + o.timeoutMs + LEASE_MARGIN_MS > item.claimExpiresAt) {
        await job.release(item);
        return false;
      }
      return await job.work(item);
    } catch (err) {
      // The outcome was not recorded: the lease lapses and the item is claimed again.
      logger.error({ err: describeError(err) }, `${o.name}: recording an outcome failed`);
      return false;
    }
  }

  async function workBatch(batch: T[]): Promise<number> {
    let next = 0;
    let done = 0;
    const lane = async () => {
      while (next < batch.length) if (await one(batch[next++]!)) done++;
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, batch.length) }, lane));
    return done;
  }

  // Lanes share one queue of claimed items; at most one claim is in flight. A claim that fails ends the claiming;
  // what was claimed is still worked (or handed back when stopping), then the pass rejects with the claim's error.
  async function pipelinedPass(): Promise<number> {
    const queue: T[] = [];
    let more = true;
    let failure: { err: unknown } | undefined;
    let claiming: Promise<void> | undefined;
    const refill = (): Promise<void> =>
      (claiming ??= job
        .claim({ now: clock.now(), workerId, leaseMs: o.leaseMs, limit: o.batchSize })
        .then(
          (batch) => {
            queue.push(...batch);
            if (batch.length === 0) more = false;
          },
          (err: unknown) => {
            failure = { err };
            more = false;
          },
        )
        .finally(() => {
          claiming = undefined;
        }));
    let done = 0;
    const lane = async () => {
      for (;;) {
        const item = queue.shift();
        if (item === undefined) {
          if (!more || stopping) return;
          await refill();
          continue;
        }
        // One batch ahead: a claim takes a while on a busy database, and lanes must not wait for it.
        if (more && !stopping && queue.length < o.batchSize) void refill();
        if (await one(item)) done++;
      }
    };
    try {
      await Promise.all(Array.from({ length: o.concurrency }, lane));
      await claiming;
      // A batch claimed by a prefetch after the lanes had all left (stopping) is handed back, not left leased.
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await one(item);
    } finally {
      await job.settle?.();
    }
    if (failure) throw failure.err;
    return done;
  }

  async function pass(): Promise<number> {
    if (o.prefetch) return pipelinedPass();
    let total = 0;
    try {
      while (!stopping) {
        const batch = await job.claim({ now: clock.now(), workerId, leaseMs: o.leaseMs, limit: o.batchSize });
        if (batch.length === 0) break;
        total += await workBatch(batch);
      }
    } finally {
      await job.settle?.();
    }
    return total;
  }

  function runOnce(): Promise<number> {
    if (stopping) return Promise.resolve(0);
    const run = pass();
    runs.add(run);
    const forget = () => runs.delete(run);
    void run.then(forget, forget);
    return run;
  }

  const sleep = () =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, o.pollIntervalMs);
      t.unref();
      function done() {
        clearTimeout(t);
        interruptSleep = undefined;
        resolve();
      }
      interruptSleep = done;
    });

  return {
    runOnce,
    start() {
      if (loop || stopping) return;
      loop = (async () => {
        while (!stopping) {
          woken = false;
          let n = 0;
          try {
            n = await runOnce();
          } catch (err) {
            logger.error({ err: describeError(err) }, `${o.name}: pass failed`);
          }
          if (!stopping && n === 0 && !woken) await sleep();
        }
      })();
    },
    wake() {
      woken = true;
      interruptSleep?.();
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        interruptSleep?.();
        await loop;
        await Promise.allSettled([...runs]);
        await job.settle?.();
      })();
      return stopped;
    },
  };
}

/**
 * Wakes runners when another process may have committed work for them (Db.watchWork): the table's own runner, or
 * every runner in `all` when the database cannot say which table (SQLite). Returns the unsubscribe.
 */
export function wakeOnWork(db: Db, byTable: Record<string, () => void>, all: readonly (() => void)[]): () => void {
  return db.watchWork((table) => {
    if (table !== null) return byTable[table]?.();
    for (const w of all) w();
  });
}
