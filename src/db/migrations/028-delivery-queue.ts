import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.js';

// Issue 25, PostgreSQL dispatch: a delivery's due state and lease move out of `deliveries` into delivery_queue, a
// row per open (pending or retrying) delivery, so that recording an outcome changes no indexed column of
// `deliveries`: on PostgreSQL its update is then heap-only (no new entry in each of its indexes), which halved the
// backends' cost of a claim and its record in bench:delivery-layout (62 → 32 µs a delivery).
// - The queue row holds when the delivery is due, the attempts made (the lease's guard) and the lease. It is
//   written with the delivery's own outcome, in the same statement or transaction, and goes when the delivery
//   settles; deleting a delivery deletes it.
// - Every insert of an open delivery queues it (a trigger): the outbox, replays, and any writer older than this
//   migration, so no open delivery is ever missing from the queue.
// - Retention walks deliveries by created_at (which never changes) instead of updated_at, and still keeps a row
//   until its last write is past the cutoff (retention.repo.ts).
// - On PostgreSQL deliveries keep their pages' room (fillfactor 50, migration 020): the record's update, not the
//   claim, now needs it to stay heap-only.
// - deliveries.claimed_by and claim_expires_at stay, unused and null, for code older than this migration during a
//   rolling upgrade: its inserts name them (and are queued by the trigger); its workers still claim and send from
//   `deliveries`, so a delivery may be sent twice in that window (at least once holds: the queue row stays until a
//   current worker records it).
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('delivery_queue')
    .addColumn('id', 'text', (c) => c.primaryKey().references('deliveries.id').onDelete('cascade'))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claim_expires_at', 'bigint')
    .execute();
  await sql`insert into delivery_queue (id, next_attempt_at, attempts, claimed_by, claim_expires_at)
    select id, coalesce(next_attempt_at, created_at), attempts, claimed_by, claim_expires_at from deliveries
    where status in ('pending', 'retrying')`.execute(db);
  await db.schema.createIndex('delivery_queue_due').on('delivery_queue').column('next_attempt_at').execute();
  if (dialect === 'postgres') {
    // Room on each page for a claim's new row versions (heap-only updates), as 020 gave deliveries.
    await sql`alter table delivery_queue set (fillfactor = 50)`.execute(db);
    await sql`create function signet_queue_delivery() returns trigger language plpgsql as $$
      begin
        insert into delivery_queue (id, next_attempt_at, attempts)
          values (new.id, coalesce(new.next_attempt_at, new.created_at), new.attempts);
        return null;
      end $$`.execute(db);
    await sql`create trigger delivery_queued after insert on deliveries for each row
      when (new.status in ('pending', 'retrying')) execute function signet_queue_delivery()`.execute(db);
  } else {
    await sql`create trigger delivery_queued after insert on deliveries
      when new.status in ('pending', 'retrying')
      begin
        insert into delivery_queue (id, next_attempt_at, attempts)
          values (new.id, coalesce(new.next_attempt_at, new.created_at), new.attempts);
      end`.execute(db);
  }
  await db.schema.dropIndex('deliveries_open_due').ifExists().execute();
  await db.schema.dropIndex('retention_deliveries_updated').ifExists().execute();
  await db.schema.createIndex('retention_deliveries_created').on('deliveries').column('created_at').execute();
}
