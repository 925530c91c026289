import { sql, type Kysely } from 'kysely';

// PostgreSQL only: a commit that changes what the in-process caches hold (API keys' access columns, workspaces,
// hooks) sends NOTIFY signet_changes, so every instance drops its cached copies (db/pg-change-probe.ts). Statement
// triggers: one notice per statement, delivered at commit, never for a rolled-back change. Last-used bookkeeping on
// api_keys changes none of the listed columns and sends nothing. SQLite has its own probe and needs nothing here.
export const NOTIFY_CHANNEL = 'signet_changes';
export const NOTIFY_TRIGGERS = ['signet_notify_api_keys', 'signet_notify_workspaces', 'signet_notify_hooks'] as const;

export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql
    .raw(
      `create or replace function signet_notify_change() returns trigger language plpgsql as $$
       begin perform pg_notify('${NOTIFY_CHANNEL}', tg_table_name); return null; end $$`,
    )
    .execute(db);
  const on = {
    signet_notify_api_keys:
      'insert or delete or truncate or update of id, workspace_id, key_hash, revoked_at, rate_limit, allowed_ips, allowed_origins on api_keys',
    signet_notify_workspaces: 'insert or delete or truncate or update on workspaces',
    signet_notify_hooks: 'insert or delete or truncate or update on hooks',
  } satisfies Record<(typeof NOTIFY_TRIGGERS)[number], string>;
  for (const [name, events] of Object.entries(on)) {
    await sql
      .raw(`create trigger ${name} after ${events} for each statement execute function signet_notify_change()`)
      .execute(db);
  }
}
