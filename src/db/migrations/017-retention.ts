import type { Kysely } from 'kysely';

// Retention (issue 25, point 3): the indexes each prune scan walks, oldest first, bounded by its cutoff, and
// deliveries by event (an event may go only when none is left; PostgreSQL checks the same on each delete). New
// indexes only; older code never notices them.
const INDEXES: [name: string, table: string, column: string][] = [
  ['retention_events_created', 'events', 'created_at'],
  ['retention_deliveries_event', 'deliveries', 'event_id'],
  ['retention_deliveries_updated', 'deliveries', 'updated_at'],
  ['retention_attempts_started', 'delivery_attempts', 'started_at'],
  ['retention_mail_outbox_sent', 'mail_outbox', 'sent_at'],
  ['retention_sms_outbox_sent', 'sms_outbox', 'sent_at'],
  ['retention_dashboard_sessions_seen', 'dashboard_sessions', 'last_seen_at'],
  ['retention_user_tokens_created', 'user_tokens', 'created_at'],
  ['retention_job_runs_started', 'job_runs', 'started_at'],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, table, column] of INDEXES)
    await db.schema.createIndex(name).ifNotExists().on(table).column(column).execute();
}
