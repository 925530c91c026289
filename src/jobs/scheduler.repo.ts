// The slot table of the scheduler: one row per (job, time slot), inserted by the one worker that runs it.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { PruneTarget } from './prune.repo.js';

/** Claims (job, slot); exactly one caller across all instances gets true. */
export async function claimSlot(
  db: Kysely<Database>,
  name: string,
  slot: number,
  workerId: string,
  now: number,
): Promise<boolean> {
  const r = await db
    .insertInto('job_runs')
    .values({ name, slot, claimed_by: workerId, started_at: now, finished_at: null, result: null })
    .onConflict((oc) => oc.columns(['name', 'slot']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function finishSlot(
  db: Kysely<Database>,
  name: string,
  slot: number,
  now: number,
  result: unknown,
): Promise<void> {
  await db
    .updateTable('job_runs')
    .set({ finished_at: now, result: JSON.stringify(result) })
    .where('name', '=', name)
    .where('slot', '=', slot)
    .execute();
}

export const listRuns = (db: Kysely<Database>, name: string) =>
  db.selectFrom('job_runs').selectAll().where('name', '=', name).orderBy('slot').execute();

/** Slot rows started before the cutoff (at least two days back, so never a current slot: the longest is a day). */
export const JOB_RUNS_PRUNE: PruneTarget<'job_runs'> = {
  table: 'job_runs',
  key: ['name', 'slot'],
  order: 'started_at',
  expired: (eb, cutoff) => eb('job_runs.started_at', '<', cutoff),
};
