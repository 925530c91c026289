import { sql, type Kysely } from 'kysely';

// Issue 25, dispatch near the ceiling.
// - The due deliveries as their own index, in claim order: a claim walks it from the oldest due row and stops after
//   its batch, where the (status, next_attempt_at) index made it sort every due row of both statuses per claim. It
//   holds only open rows, so recording an outcome removes an entry instead of adding one for the settled row. It
//   replaces deliveries_due (001), which SQLite's planner kept choosing without statistics and which nothing else
//   needs on a hot path (the history lists are by workspace or hook); code from before this migration still finds its
//   due rows, through this index where its planner proves the predicate, by a scan otherwise.
// - PostgreSQL only: an insert into a work table sends NOTIFY signet_work with the table's name at commit, so an
//   idle worker in another process starts at once instead of at its next poll (db/pg-change-probe.ts listens; SQLite
//   workers watch the file's data_version instead, db.ts). One notice per statement, none for a rollback.
// - PostgreSQL only: deliveries' pages keep room (fillfactor 70), so that a claim, which changes no indexed column,
//   is a heap-only update instead of a new entry in each of the table's six indexes. Applies to pages written from
//   now on.
export const WORK_CHANNEL = 'signet_work';
export const WORK_TABLES = ['deliveries', 'mail_outbox', 'sms_outbox'] as const;

export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createIndex('deliveries_open_due')
    .ifNotExists()
    .on('deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), 'in', [sql.lit('pending'), sql.lit('retrying')])
    .execute();
  await db.schema.dropIndex('deliveries_due').ifExists().execute();
  if (dialect !== 'postgres') return;
  await sql`alter table deliveries set (fillfactor = 70)`.execute(db);
  await sql
    .raw(
      `create or replace function signet_notify_work() returns trigger language plpgsql as $$
       begin perform pg_notify('${WORK_CHANNEL}', tg_table_name); return null; end $$`,
    )
    .execute(db);
  for (const table of WORK_TABLES) {
    await sql
      .raw(
        `create trigger signet_work_${table} after insert on ${table}
         for each statement execute function signet_notify_work()`,
      )
      .execute(db);
  }
}
