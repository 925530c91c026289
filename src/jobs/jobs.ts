// Clock-driven jobs. Each runs once per time slot across every worker (a unique (job, slot) row decides who runs
// it), and can be run once on demand with `signet jobs run <name>`. Jobs are idempotent, so a slot whose runner
// died is simply done again in the next slot.
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { IDEMPOTENCY_TTL_MS } from '../idempotency/idempotency.js';
import { pruneIdempotencyKeys } from '../idempotency/idempotency.repo.js';
import { claimSlot, finishSlot } from './jobs.repo.js';
import { expireDue } from '../signing/signing.service.js';
import { createEmitter } from '../webhooks/outbox.repo.js';

export type JobLogger = { info(o: object, m?: string): void; error(o: object, m?: string): void };
export type JobDeps = { db: Db; clock: Clock; logger?: JobLogger };
export type Job = { everyMs: number; run(deps: JobDeps): Promise<Record<string, unknown>> };

const HOUR = 3600_000;

const registry: Record<string, Job> = {
  'prune-idempotency': {
    everyMs: HOUR,
    run: async ({ db, clock }) => ({ deleted: await pruneIdempotencyKeys(db.kysely, clock.now() - IDEMPOTENCY_TTL_MS) }),
  },
  // The spec's hourly expiry: pending/viewed requests past expires_at become expired, each emitting once.
  'expire-requests': {
    everyMs: HOUR,
    run: ({ db, clock }) => expireDue({ db, clock, emit: createEmitter(clock) }),
  },
};

/** Later modules add their jobs here at import time (one line each). */
export function registerJob(name: string, job: Job): void {
  registry[name] = job;
}

export const jobNames = (): string[] => Object.keys(registry);

export async function runJob(name: string, deps: JobDeps): Promise<Record<string, unknown>> {
  const job = registry[name];
  if (!job) throw new Error(`no job "${name}"; known: ${jobNames().join(', ')}`);
  return job.run(deps);
}

export type Scheduler = {
  /** Runs every job whose current slot nobody has claimed yet; returns the names it ran. */
  tick(): Promise<string[]>;
  start(intervalMs?: number): void;
  stop(): Promise<void>;
};

export function createScheduler(deps: JobDeps & { workerId: string }): Scheduler {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<string[]> = Promise.resolve([]);
  const tick = async (): Promise<string[]> => {
    const ran: string[] = [];
    for (const [name, job] of Object.entries(registry)) {
      const now = deps.clock.now();
      const slot = Math.floor(now / job.everyMs);
      if (!(await claimSlot(deps.db.kysely, name, slot, deps.workerId, now))) continue;
      try {
        const result = await job.run(deps);
        await finishSlot(deps.db.kysely, name, slot, deps.clock.now(), result);
        deps.logger?.info({ job: name, result }, 'job done');
      } catch (err) {
        await finishSlot(deps.db.kysely, name, slot, deps.clock.now(), { error: (err as Error).message }).catch(() => undefined);
        deps.logger?.error({ job: name, err }, 'job failed');
      }
      ran.push(name);
    }
    return ran;
  };
  return {
    tick: () => (running = running.then(tick, tick)),
    start(intervalMs = 30_000) {
      if (timer) return;
      timer = setInterval(() => void (running = running.then(tick, tick)).catch(() => undefined), intervalMs);
      timer.unref();
      void (running = running.then(tick, tick)).catch(() => undefined);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running.catch(() => undefined);
    },
  };
}
