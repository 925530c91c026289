// Clock-driven jobs, each runnable once on demand (`signet jobs run <name>`) and by the worker on its schedule.
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { IDEMPOTENCY_TTL_MS } from '../idempotency/idempotency.js';
import { pruneIdempotencyKeys } from '../idempotency/idempotency.repo.js';

export type JobDeps = { db: Db; clock: Clock; logger?: { info(o: object, m?: string): void } };

const jobs: Record<string, (deps: JobDeps) => Promise<Record<string, unknown>>> = {
  'prune-idempotency': async ({ db, clock }) => ({
    deleted: await pruneIdempotencyKeys(db.kysely, clock.now() - IDEMPOTENCY_TTL_MS),
  }),
};

export const JOB_NAMES = Object.keys(jobs);

export async function runJob(name: string, deps: JobDeps): Promise<Record<string, unknown>> {
  const job = jobs[name];
  if (!job) throw new Error(`no job "${name}"; known: ${JOB_NAMES.join(', ')}`);
  return job(deps);
}
