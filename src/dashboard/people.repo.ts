// All SQL of dashboard people: users, workspace memberships, one-time tokens (set-password, invitation) and sign-in
// sessions. Tokens and session cookies are stored only as SHA-256 hashes.
import type { Kysely } from 'kysely';
import type { Database, DashboardSessionsTable, UsersTable } from '../db/schema.js';
import type { PruneTarget } from '../jobs/prune.repo.js';

type Db = Kysely<Database>;
export type UserRow = UsersTable;
export type SessionRow = DashboardSessionsTable;
export type Role = 'owner' | 'admin' | 'member';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export const findUserByEmail = (db: Db, email: string) =>
  db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();

export const findUser = (db: Db, id: string) =>
  db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

export const insertUser = (db: Db, row: UserRow) => db.insertInto('users').values(row).execute();

export async function addMember(
  db: Db,
  m: { workspaceId: string; userId: string; role: Role; by: string | null },
  now: number,
) {
  await db
    .insertInto('workspace_members')
    .values({ workspace_id: m.workspaceId, user_id: m.userId, role: m.role, created_by: m.by, created_at: now })
    .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doNothing())
    .execute();
}

export const findMembership = (db: Db, workspaceId: string, userId: string) =>
  db
    .selectFrom('workspace_members')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();

/** The workspaces a user belongs to, oldest membership first. */
export const membershipsOf = (db: Db, userId: string) =>
  db
    .selectFrom('workspace_members')
    .innerJoin('workspaces', 'workspaces.id', 'workspace_members.workspace_id')
    .select(['workspaces.id', 'workspaces.name', 'workspaces.slug', 'workspaces.tier', 'workspace_members.role'])
    .where('workspace_members.user_id', '=', userId)
    .orderBy('workspace_members.created_at')
    .execute();

export const listMembers = (db: Db, workspaceId: string) =>
  db
    .selectFrom('workspace_members')
    .innerJoin('users', 'users.id', 'workspace_members.user_id')
    .select([
      'users.id',
      'users.email',
      'users.password_hash',
      'workspace_members.role',
      'workspace_members.created_at',
    ])
    .where('workspace_members.workspace_id', '=', workspaceId)
    .orderBy('workspace_members.created_at')
    .execute();

export const insertToken = (
  db: Db,
  t: { hash: string; kind: 'set_password' | 'invite'; userId: string; workspaceId: string; by: string | null },
  now: number,
  expiresAt: number,
) =>
  db
    .insertInto('user_tokens')
    .values({
      token_hash: t.hash,
      kind: t.kind,
      user_id: t.userId,
      workspace_id: t.workspaceId,
      created_by: t.by,
      created_at: now,
      expires_at: expiresAt,
      used_at: null,
    })
    .execute();

export const findToken = (db: Db, hash: string) =>
  db.selectFrom('user_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();

/** Uses a token once: true for the one caller that marked it used. */
export async function useToken(db: Db, hash: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('user_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export const setPasswordHash = (db: Db, userId: string, hash: string, now: number) =>
  db.updateTable('users').set({ password_hash: hash, password_changed_at: now }).where('id', '=', userId).execute();

export const insertSession = (db: Db, row: SessionRow) => db.insertInto('dashboard_sessions').values(row).execute();

export const findSession = (db: Db, hash: string) =>
  db.selectFrom('dashboard_sessions').selectAll().where('token_hash', '=', hash).executeTakeFirst();

export const touchSession = (db: Db, hash: string, now: number) =>
  db.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('token_hash', '=', hash).execute();

export const revokeSession = (db: Db, hash: string, now: number) =>
  db
    .updateTable('dashboard_sessions')
    .set({ revoked_at: now })
    .where('token_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .execute();

/** Every live session of the user (sign-out everywhere). */
export const revokeUserSessions = (db: Db, userId: string, now: number) =>
  db
    .updateTable('dashboard_sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();

/** Sessions that ended before the cutoff: signed out, or idle for `idleMs` (after which they no longer open). */
export const dashboardSessionsPrune = (idleMs: number): PruneTarget<'dashboard_sessions'> => ({
  table: 'dashboard_sessions',
  key: ['token_hash'],
  order: 'last_seen_at',
  // Either end comes after the last use, so `last_seen_at < cutoff` bounds the scan.
  expired: (eb, cutoff) =>
    eb.and([
      eb('dashboard_sessions.last_seen_at', '<', cutoff),
      eb.or([
        eb('dashboard_sessions.revoked_at', '<', cutoff),
        eb('dashboard_sessions.last_seen_at', '<', cutoff - idleMs),
      ]),
    ]),
});

/** Invitation and password links used or expired before the cutoff. */
export const USER_TOKENS_PRUNE: PruneTarget<'user_tokens'> = {
  table: 'user_tokens',
  key: ['token_hash'],
  // Either end comes after the link was made, so `created_at < cutoff` bounds the scan.
  order: 'created_at',
  expired: (eb, cutoff) =>
    eb.and([
      eb('user_tokens.created_at', '<', cutoff),
      eb.or([eb('user_tokens.used_at', '<', cutoff), eb('user_tokens.expires_at', '<', cutoff)]),
    ]),
};
