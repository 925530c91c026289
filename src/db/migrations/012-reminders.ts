import type { Kysely } from 'kysely';

// Automatic reminders and the expiry warning (issue 22). Additive and nullable only: a document's reminder policy
// (null: none), each signer's next reminder, how many were sent and when the expiry warning went out, and a
// workspace's default policy. Code on a schema without them never writes them (signing/reminders.ts).
// Numbered 012: 011 is another change's.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('documents').addColumn('reminder_after_days', 'integer').execute();
  await db.schema.alterTable('documents').addColumn('reminder_every_days', 'integer').execute();
  await db.schema.alterTable('signing_requests').addColumn('next_reminder_at', 'bigint').execute();
  await db.schema.alterTable('signing_requests').addColumn('reminders_sent', 'integer').execute();
  await db.schema.alterTable('signing_requests').addColumn('expiry_warned_at', 'bigint').execute();
  await db.schema.alterTable('workspaces').addColumn('reminder_after_days', 'integer').execute();
  await db.schema.alterTable('workspaces').addColumn('reminder_every_days', 'integer').execute();
  await db.schema
    .createIndex('signing_requests_next_reminder')
    .on('signing_requests')
    .column('next_reminder_at')
    .execute();
}
