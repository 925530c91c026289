// Dashboard people and sign-in. Guarantees:
// - Passwords are scrypt hashes (passwords.ts); set-password and invitation links are one-time tokens (only their
//   SHA-256 stored) that work once and expire after 72 h.
// - Sessions are server-side rows behind an HttpOnly cookie holding a 256-bit token (only its hash stored); they end
//   after 12 h without use, on sign-out, and all at once when the password changes.
// - Sign-in is throttled per account and per address through the shared limiter; a throttled or locked attempt gets
//   exactly the answer a wrong password gets, and an unknown e-mail costs the same hashing time as a known one.
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/schema.js';
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { ApiError } from '../lib/errors.js';
import { catalogues } from '../i18n/i18n.js';
import type { MailQueue } from '../mail/outbox.js';
import type { RateLimiter } from '../ratelimit/ratelimit.js';
import { isEmailAddress } from '../lib/email.js';
import { linkTokenHash, newLinkToken } from '../lib/tokens.js';
import { recordAudit } from '../audit/audit-log.repo.js';
import { workspaceLocale } from '../workspaces/settings.service.js';
import type { AuthContext } from '../http/request-context.js';
import { dummyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import type { DashboardKey, Message } from './words.js';
import { allows } from './roles.js';
import { pruneJob, type PruneDeps } from '../jobs/prune.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import {
  addMember,
  dashboardSessionsPrune,
  findMembership,
  findSession,
  findToken,
  findUser,
  findUserByEmail,
  insertSession,
  insertToken,
  insertUser,
  membershipsOf,
  revokeSession,
  revokeUserSessions,
  setPasswordHash,
  touchSession,
  useToken,
  USER_TOKENS_PRUNE,
  ROLES,
  type Role,
} from './people.repo.js';

const HOUR = 3600_000;
export const LINK_TTL_MS = 72 * HOUR;
export const SESSION_IDLE_MS = 12 * HOUR;
/** last_seen_at is written at most this often, so reading pages does not write on every request. */
const TOUCH_EVERY_MS = 60_000;
/** Sign-in attempts per 60 s window: per account, and per client address. */
export const SIGNIN_PER_ACCOUNT = 5;
export const SIGNIN_PER_ADDRESS = 30;

export type PeopleDeps = { db: Db; clock: Clock; limiter: RateLimiter; config: Pick<Config, 'baseUrl'> };

/** 403 in the dashboard's own words: its page says them in the visitor's language (the message keeps English). */
export class NotAllowed extends ApiError {
  constructor(readonly reason: DashboardKey) {
    super('forbidden', catalogues.en[`dashboard.${reason}`]);
  }
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/**
 * The user with this e-mail (created without a password if new) made a member of the workspace with `role`, and a
 * one-time link token for them: what `signet user create` and an invitation share, inside the caller's transaction.
 */
async function grantLink(
  trx: Kysely<Database>,
  o: { email: string; workspaceId: string; role: Role; by: string; kind: 'set_password' | 'invite'; hash: string },
  now: number,
) {
  let user = await findUserByEmail(trx, o.email);
  if (!user) {
    user = { id: newId('usr'), email: o.email, password_hash: null, password_changed_at: null, created_at: now };
    await insertUser(trx, user);
  }
  await addMember(trx, { workspaceId: o.workspaceId, userId: user.id, role: o.role, by: o.by }, now);
  await insertToken(
    trx,
    { hash: o.hash, kind: o.kind, userId: user.id, workspaceId: o.workspaceId, by: o.by },
    now,
    now + LINK_TTL_MS,
  );
  return user;
}

/**
 * A user in a workspace with a one-time set-password link: the first owner's way in (`signet user create`). An
 * existing user is added to the workspace (role kept if already a member) and gets a fresh link.
 */
export async function createUserLink(
  deps: Pick<PeopleDeps, 'db' | 'clock' | 'config'>,
  o: { email: string; workspaceId: string; role: Role; by: string },
): Promise<{ userId: string; email: string; url: string; expiresAt: number }> {
  const email = normaliseEmail(o.email);
  if (!isEmailAddress(email)) throw new Error(`"${o.email}" is not an e-mail address`);
  const now = deps.clock.now();
  const { token, hash } = newLinkToken();
  const userId = await deps.db.kysely.transaction().execute(async (trx) => {
    const user = await grantLink(trx, { ...o, email, kind: 'set_password', hash }, now);
    await recordAudit(
      trx,
      {
        workspaceId: o.workspaceId,
        actor: o.by,
        action: 'user.link_created',
        targetId: user.id,
        detail: { email, role: o.role },
      },
      now,
    );
    return user.id;
  });
  return { userId, email, url: `${deps.config.baseUrl}/dashboard/set-password/${token}`, expiresAt: now + LINK_TTL_MS };
}

export type InviteResult = { ok: true; email: string } | { ok: false; problem: Message };

/**
 * An owner invites someone by e-mail: the person is added with `role` and gets a one-time link (72 h) through the
 * mail outbox, in the same transaction. Someone already in the workspace is not invited again.
 */
export async function inviteMember(
  deps: Pick<PeopleDeps, 'db' | 'clock' | 'config'> & { mail: MailQueue },
  v: Viewer,
  o: { email: string; role: string },
): Promise<InviteResult> {
  // A second line: roles.ts refuses non-owners at the route already.
  if (!allows(v.role, 'owner')) throw new NotAllowed('error.ownersOnly');
  const email = normaliseEmail(o.email);
  if (!isEmailAddress(email)) return { ok: false, problem: { key: 'people.badEmail' } };
  if (!(ROLES as readonly string[]).includes(o.role)) return { ok: false, problem: { key: 'people.badRole' } };
  const now = deps.clock.now();
  const { token, hash } = newLinkToken();
  return deps.db.kysely.transaction().execute(async (trx): Promise<InviteResult> => {
    const known = await findUserByEmail(trx, email);
    if (known && (await findMembership(trx, v.workspace.id, known.id)))
      return { ok: false, problem: { key: 'people.already', vars: { email } } };
    const by = actorOf(v);
    const user = await grantLink(
      trx,
      { email, workspaceId: v.workspace.id, role: o.role as Role, by, kind: 'invite', hash },
      now,
    );
    await deps.mail.enqueue(trx, {
      workspaceId: v.workspace.id,
      to: { email, name: '' },
      locale: 'en',
      template: 'member_invitation',
      vars: {
        inviterEmail: v.user.email,
        url: `${deps.config.baseUrl}/dashboard/set-password/${token}`,
        expiresAt: now + LINK_TTL_MS,
      },
    });
    await recordAudit(
      trx,
      {
        workspaceId: v.workspace.id,
        actor: by,
        action: 'user.invited',
        targetId: user.id,
        detail: { email, role: o.role },
      },
      now,
    );
    return { ok: true, email };
  });
}

/** The account a set-password link opens, if it is still usable. */
export async function linkAccount(deps: PeopleDeps, token: string) {
  const hash = linkTokenHash(token);
  const t = hash ? await findToken(deps.db.kysely, hash) : undefined;
  if (!t || t.used_at !== null || t.expires_at <= deps.clock.now()) return null;
  const user = await findUser(deps.db.kysely, t.user_id);
  return user ? { user, token: t } : null;
}

export type SetPasswordResult = { ok: true } | { ok: false; problem: Message };
const DIFFER: Message = { key: 'password.differ' };
const LINK_USED: Message = { key: 'password.linkUsed' };

/** Sets the password through a link, once; every session of the user ends. */
export async function setPasswordWithLink(
  deps: PeopleDeps,
  token: string,
  password: string,
  confirm: string,
): Promise<SetPasswordResult> {
  const problem = passwordProblem(password) ?? (password === confirm ? null : DIFFER);
  if (problem) return { ok: false, problem };
  const found = await linkAccount(deps, token);
  if (!found) return { ok: false, problem: LINK_USED };
  const hash = await hashPassword(password);
  const now = deps.clock.now();
  const used = await deps.db.kysely.transaction().execute(async (trx) => {
    if (!(await useToken(trx, found.token.token_hash, now))) return false;
    await setPasswordHash(trx, found.user.id, hash, now);
    await revokeUserSessions(trx, found.user.id, now);
    await recordAudit(
      trx,
      {
        workspaceId: found.token.workspace_id,
        actor: `user:${found.user.email}`,
        action: 'user.password_set',
        targetId: found.user.id,
      },
      now,
    );
    return true;
  });
  return used ? { ok: true } : { ok: false, problem: LINK_USED };
}

/** A signed-in person changes their password: the current one is checked, and every session ends (this one too). */
export async function changePassword(
  deps: PeopleDeps,
  v: Viewer,
  o: { current: string; password: string; confirm: string },
): Promise<SetPasswordResult> {
  const user = await findUser(deps.db.kysely, v.user.id);
  if (!user?.password_hash || !(await verifyPassword(o.current, user.password_hash)))
    return { ok: false, problem: { key: 'password.currentWrong' } };
  const problem = passwordProblem(o.password) ?? (o.password === o.confirm ? null : DIFFER);
  if (problem) return { ok: false, problem };
  const hash = await hashPassword(o.password);
  const now = deps.clock.now();
  await deps.db.kysely.transaction().execute(async (trx) => {
    await setPasswordHash(trx, user.id, hash, now);
    await revokeUserSessions(trx, user.id, now);
    await recordAudit(
      trx,
      { workspaceId: v.workspace.id, actor: actorOf(v), action: 'user.password_changed', targetId: user.id },
      now,
    );
  });
  return { ok: true };
}

export type SignInResult = { ok: true; token: string } | { ok: false };

/** One answer for every failure: unknown account, wrong password, no password yet, throttled. */
export async function signIn(
  deps: PeopleDeps,
  o: { email: string; password: string; address: string; userAgent: string | null },
): Promise<SignInResult> {
  const email = normaliseEmail(o.email);
  const [perAccount, perAddress] = await Promise.all([
    deps.limiter.hit(`signin:acct:${email}`, SIGNIN_PER_ACCOUNT),
    deps.limiter.hit(`signin:addr:${o.address}`, SIGNIN_PER_ADDRESS),
  ]);
  const user = await findUserByEmail(deps.db.kysely, email);
  const matches = await verifyPassword(o.password, user?.password_hash ?? (await dummyHash()));
  if (!perAccount.allowed || !perAddress.allowed || !user || !user.password_hash || !matches) return { ok: false };
  const workspaces = await membershipsOf(deps.db.kysely, user.id);
  if (workspaces.length === 0) return { ok: false };
  const { token, hash } = newLinkToken();
  const now = deps.clock.now();
  await insertSession(deps.db.kysely, {
    token_hash: hash,
    user_id: user.id,
    workspace_id: workspaces[0]!.id,
    created_at: now,
    last_seen_at: now,
    revoked_at: null,
    ip: o.address,
    user_agent: o.userAgent?.slice(0, 512) ?? null,
  });
  return { ok: true, token };
}

export type Viewer = {
  sessionHash: string;
  user: { id: string; email: string };
  workspace: { id: string; name: string; slug: string; tier: string };
  role: Role;
};

/** The signed-in person behind a session cookie, or null (unknown, revoked, idle too long, no longer a member). */
export async function viewerOf(deps: PeopleDeps, cookie: string | undefined): Promise<Viewer | null> {
  const hash = cookie ? linkTokenHash(cookie) : null;
  if (!hash) return null;
  const s = await findSession(deps.db.kysely, hash);
  const now = deps.clock.now();
  if (!s || s.revoked_at !== null || now - s.last_seen_at > SESSION_IDLE_MS) return null;
  const [user, workspaces] = await Promise.all([
    findUser(deps.db.kysely, s.user_id),
    membershipsOf(deps.db.kysely, s.user_id),
  ]);
  const ws = workspaces.find((w) => w.id === s.workspace_id);
  if (!user || !ws) return null;
  if (now - s.last_seen_at > TOUCH_EVERY_MS) await touchSession(deps.db.kysely, hash, now);
  return {
    sessionHash: hash,
    user: { id: user.id, email: user.email },
    workspace: { id: ws.id, name: ws.name, slug: ws.slug, tier: ws.tier },
    role: ws.role as Role,
  };
}

export const signOut = (deps: PeopleDeps, v: Viewer) => revokeSession(deps.db.kysely, v.sessionHash, deps.clock.now());

/** Who did it, as audit logs record dashboard actions. */
export const actorOf = (v: Viewer) => `user:${v.user.email}`;

/**
 * The person as the API's services take a caller: no key, their workspace, and their audit actor. Sending from the
 * dashboard calls the very functions the API routes call with this, so both behave the same.
 */
export const actingAs = (v: Viewer): AuthContext => ({
  keyId: null,
  actor: actorOf(v),
  workspace: { ...v.workspace },
  allowedOrigins: [],
});

/** As actingAs, for sending: the workspace's default language read too (what a send naming none takes). */
export const actingAsSender = async (db: Db, v: Viewer): Promise<AuthContext> => {
  const a = actingAs(v);
  return { ...a, workspace: { ...a.workspace, defaultLocale: await workspaceLocale(db, v.workspace.id) } };
};

/** Hourly: dashboard sessions and links that ended more than the sessions retention ago (a week by default) go. */
export const pruneSessionsJob = (deps: PruneDeps): ScheduledJob =>
  pruneJob(deps, {
    targets: [dashboardSessionsPrune(SESSION_IDLE_MS), USER_TOKENS_PRUNE],
    retention: 'sessionsMs',
    needs: '007-dashboard',
  });
