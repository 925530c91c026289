// The one prune loop behind every `prune-*` job. Guarantees: each table is pruned in batches of at most
// `batchRows` rows (one short statement each, prune.repo.ts); after each full batch the loop rests as long as the
// batch took (at most PRUNE_REST_MAX_MS), so pruning takes at most about half of the event loop (SQLite's driver is
// synchronous) and of the database, and requests keep their latency; a table is done when a batch comes back short; a run stops once its time budget is
// spent and reports `more`, leaving the rest to the next hourly run. Targets run in the order given, so children
// (attempts) go before the rows they reference (deliveries, events).
import { performance } from 'node:perf_hooks';
import type { Db } from '../db/db.js';
import { migrationApplied, type MigrationName } from '../db/migrate.js';
import type { Clock } from '../lib/clock.js';
import type { Retention } from '../config.js';
import { PRUNE_BATCH_ROWS, PRUNE_TIME_BUDGET_MS, RETENTION_DEFAULTS } from '../limits.js';
import { pruneBatch, type AnyPruneTarget } from './prune.repo.js';
import type { ScheduledJob } from './scheduler.js';

export type PruneDeps = { db: Db; clock: Clock; config?: { retention: Retention } };

export type PruneSpec = {
  targets: readonly AnyPruneTarget[];
  /** Which retention (config.retention) the targets keep. */
  retention: keyof typeof RETENTION_DEFAULTS;
  /** A server started before `signet migrate` may lack the tables: nothing to prune then. */
  needs?: MigrationName;
};

export type PruneResult = { deleted: number; batches: number; more: boolean; tables: Record<string, number> };

/** The longest rest between two batches. */
const PRUNE_REST_MAX_MS = 50;
// Pacing, not scheduling: real elapsed time, whatever the injected clock says (a test's clock stands still).
const rest = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.min(PRUNE_REST_MAX_MS, ms)));

/** Prunes every target once, in order, as of `now`. */
export async function prune(
  db: Db,
  clock: Clock,
  targets: readonly AnyPruneTarget[],
  o: { retentionMs: number; batchRows: number; budgetMs?: number },
): Promise<PruneResult> {
  const started = clock.now();
  const cutoff = started - o.retentionMs;
  const out: PruneResult = { deleted: 0, batches: 0, more: false, tables: {} };
  for (const target of targets) {
    out.tables[target.table] ??= 0;
    for (;;) {
      if (clock.now() - started >= (o.budgetMs ?? PRUNE_TIME_BUDGET_MS)) return { ...out, more: true };
      const t0 = performance.now();
      const n = await pruneBatch(db, target, cutoff, o.batchRows, started);
      out.batches++;
      out.deleted += n;
      out.tables[target.table]! += n;
      if (n < o.batchRows) break;
      await rest(performance.now() - t0);
    }
  }
  return out;
}

/** An hourly job pruning `spec.targets` under their retention; `batchRows` overrides the configured batch size. */
export function pruneJob(deps: PruneDeps, spec: PruneSpec, batchRows?: number): ScheduledJob {
  return {
    everyMs: 3600_000,
    async run() {
      if (spec.needs && !(await migrationApplied(deps.db, spec.needs))) return { deleted: 0 };
      const retention = deps.config?.retention;
      return prune(deps.db, deps.clock, spec.targets, {
        retentionMs: retention?.[spec.retention] ?? RETENTION_DEFAULTS[spec.retention],
        batchRows: batchRows ?? retention?.batchRows ?? PRUNE_BATCH_ROWS,
      });
    },
  };
}
