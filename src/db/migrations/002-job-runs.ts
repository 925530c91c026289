import type { Kysely } from 'kysely';

// One row per (job, time slot): the unique key is what makes a scheduled job run once per slot across instances.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('job_runs')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slot', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addColumn('result', 'text')
    .addPrimaryKeyConstraint('job_runs_pk', ['name', 'slot'])
    .execute();
}
