import { sql, type Kysely } from 'kysely';

// The workspace dashboard (issue 11): people (users, their workspace memberships and roles), one-time set-password
// and invitation tokens and server-side sign-in sessions (only hashes of tokens are stored), and the key-use audit
// (one row per /v1 request made with a key, kept 30 days). Deliveries waiting for their next attempt after a
// failure take the spec's name, `retrying` (until now `pending`, which stays for never-attempted rows).
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const autoId = (t: any) =>
    dialect === 'postgres'
      ? t.addColumn('id', 'bigserial', (c: any) => c.primaryKey())
      : t.addColumn('id', 'integer', (c: any) => c.primaryKey().autoIncrement());

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('password_changed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('workspace_members')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('workspace_members_pk', ['workspace_id', 'user_id'])
    .execute();
  await db.schema.createIndex('workspace_members_user').on('workspace_members').column('user_id').execute();

  await db.schema
    .createTable('user_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();

  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('dashboard_sessions_user').on('dashboard_sessions').column('user_id').execute();

  await autoId(db.schema.createTable('key_uses'))
    .addColumn('key_id', 'text', (c: any) => c.notNull())
    .addColumn('workspace_id', 'text', (c: any) => c.notNull())
    .addColumn('at', 'bigint', (c: any) => c.notNull())
    .addColumn('ip_masked', 'text')
    .addColumn('method', 'text', (c: any) => c.notNull())
    .addColumn('route', 'text', (c: any) => c.notNull())
    .addColumn('status', 'integer', (c: any) => c.notNull())
    .execute();
  await db.schema.createIndex('key_uses_key_at').on('key_uses').columns(['key_id', 'at']).execute();
  await db.schema.createIndex('key_uses_at').on('key_uses').column('at').execute();

  await sql`update deliveries set status = 'retrying' where status = 'pending' and attempts > 0`.execute(db);
}
