// Clock-driven jobs (the hourly expiry, pruning). Guarantees: each job runs once per time slot across every worker
// (a unique (job, slot) row decides who runs it), and any job can be run once on demand (`signet jobs run`). Jobs
// are idempotent, so a slot whose runner died is simply done again in the next one. Each job is defined by the
// feature it serves; runtime.ts lists them.
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { describeError, silentLogger, type Logger } from '../lib/logger.js';
import { claimSlot, finishSlot, JOB_RUNS_PRUNE } from './scheduler.repo.js';
import { pruneJob, type PruneDeps } from './prune.js';

export type ScheduledJob = { everyMs: number; run(): Promise<Record<string, unknown>> };
export type JobCatalogue = Readonly<Record<string, ScheduledJob>>;

export async function runJob(jobs: JobCatalogue, name: string): Promise<Record<string, unknown>> {
  const job = jobs[name];
  if (!job) throw new Error(`no job "${name}"; known: ${Object.keys(jobs).join(', ')}`);
  return job.run();
}

export type Scheduler = {
  /** Runs every job whose current slot nobody has claimed yet; returns the names it ran. */
  tick(): Promise<string[]>;
  start(intervalMs?: number): void;
  stop(): Promise<void>;
};

export function createScheduler(o: {
  db: Db;
  clock: Clock;
  workerId: string;
  jobs: JobCatalogue;
  logger?: Logger;
}): Scheduler {
  const logger = o.logger ?? silentLogger;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<string[]> = Promise.resolve([]);
  const tick = async (): Promise<string[]> => {
    const ran: string[] = [];
    for (const [name, job] of Object.entries(o.jobs)) {
      const now = o.clock.now();
      const slot = Math.floor(now / job.everyMs);
      if (!(await claimSlot(o.db.kysely, name, slot, o.workerId, now))) continue;
      try {
        const result = await job.run();
        await finishSlot(o.db.kysely, name, slot, o.clock.now(), result);
        logger.info({ job: name, result }, 'job done');
      } catch (err) {
        await finishSlot(o.db.kysely, name, slot, o.clock.now(), { error: (err as Error).message }).catch(
          () => undefined,
        );
        logger.error({ job: name, err: describeError(err) }, 'job failed');
      }
      ran.push(name);
    }
    return ran;
  };
  const next = () => (running = running.then(tick, tick));
  return {
    tick: next,
    start(intervalMs = 30_000) {
      if (timer) return;
      timer = setInterval(() => void next().catch(() => undefined), intervalMs);
      timer.unref();
      void next().catch(() => undefined);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running.catch(() => undefined);
    },
  };
}

/** Hourly: the slot table keeps a month of runs by default (`RETENTION_JOB_RUNS_DAYS`). */
export const pruneJobRunsJob = (deps: PruneDeps): ScheduledJob =>
  pruneJob(deps, { targets: [JOB_RUNS_PRUNE], retention: 'jobRunsMs' });
