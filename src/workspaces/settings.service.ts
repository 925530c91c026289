// A workspace's settings as operators change them, from the CLI (`signet workspace reminders`, `workspace update`) or the dashboard's
// Settings page: one function per setting, so both apply the same rules and leave the same audit-log row, written
// in the change's own transaction (the change and its row commit together or not at all).
import type { Db } from '../db/db.js';
import { migrationApplied } from '../db/migrate.js';
import { recordAudit } from '../audit/audit-log.repo.js';
import { REMINDER_AFTER_DAYS, REMINDER_EVERY_DAYS, RETENTION_DAYS } from '../limits.js';
import type { Locale } from '../i18n/i18n.js';
import { parseLocaleSetting } from './locale.js';
import {
  findWorkspace,
  setWorkspaceDefaultLocale,
  setWorkspaceReminderDefault,
  setWorkspaceRetention,
  workspaceReminderDefault,
} from './workspaces.repo.js';

/** A reminder policy; null: no automatic reminders. */
export type ReminderPolicy = { after_days: number; every_days: number } | null;
/** Why a policy was refused: a value out of its bounds, or a schema without migration 012 yet. */
export type ReminderProblem = 'afterDays' | 'everyDays' | 'unavailable';

const whole = (v: string | number, b: { min: number; max: number }): number | null => {
  const n = typeof v === 'number' ? v : /^\s*\d{1,4}\s*$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= b.min && n <= b.max ? n : null;
};

/** The policy from two typed values (whole days within limits.ts's bounds), or the first value refused. */
export function parseReminderPolicy(
  afterDays: string | number,
  everyDays: string | number,
): { ok: true; policy: ReminderPolicy } | { ok: false; problem: ReminderProblem } {
  const after = whole(afterDays, REMINDER_AFTER_DAYS);
  if (after === null) return { ok: false, problem: 'afterDays' };
  const every = whole(everyDays, REMINDER_EVERY_DAYS);
  if (every === null) return { ok: false, problem: 'everyDays' };
  return { ok: true, policy: { after_days: after, every_days: every } };
}

export const workspaceReminders = (db: Db, workspaceId: string): Promise<ReminderPolicy> =>
  workspaceReminderDefault(db.kysely, workspaceId);

/**
 * Sets the default reminder policy new signing requests of the workspace take when they name none (null: none),
 * and records `workspace.reminders_set` with the policy as detail. Existing documents keep theirs.
 */
export async function setWorkspaceReminders(
  db: Db,
  o: { workspaceId: string; policy: ReminderPolicy; actor: string },
  now: number,
): Promise<{ ok: true } | { ok: false; problem: ReminderProblem }> {
  if (!(await migrationApplied(db, '012-reminders'))) return { ok: false, problem: 'unavailable' };
  await db.kysely.transaction().execute(async (trx) => {
    if (!(await setWorkspaceReminderDefault(trx, o.workspaceId, o.policy)))
      throw new Error(`no workspace ${o.workspaceId}`);
    await recordAudit(
      trx,
      {
        workspaceId: o.workspaceId,
        actor: o.actor,
        action: 'workspace.reminders_set',
        detail: { reminders: o.policy },
      },
      now,
    );
  });
  return { ok: true };
}

/** Whole days within RETENTION_DAYS, from a typed value or a number; null when refused. */
export const parseRetentionDays = (v: string | number): number | null => {
  const n = typeof v === 'number' ? v : /^\s*\d{1,6}\s*$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= RETENTION_DAYS.min && n <= RETENTION_DAYS.max ? n : null;
};

export const workspaceRetention = async (db: Db, workspaceId: string): Promise<number | null> => {
  const days = (await findWorkspace(db.kysely, workspaceId))?.retention_days;
  return days == null ? null : Number(days);
};

/**
 * Sets how many days after they ended the workspace's documents are purged (null: kept for ever), and records
 * `workspace.retention_set`. The next hourly purge-documents run applies it, to documents that ended before too.
 */
export async function setWorkspaceRetentionDays(
  db: Db,
  o: { workspaceId: string; days: number | null; actor: string },
  now: number,
): Promise<{ ok: true } | { ok: false; problem: 'days' | 'unavailable' }> {
  if (o.days !== null && parseRetentionDays(o.days) === null) return { ok: false, problem: 'days' };
  if (!(await migrationApplied(db, '021-purge'))) return { ok: false, problem: 'unavailable' };
  await db.kysely.transaction().execute(async (trx) => {
    if (!(await setWorkspaceRetention(trx, o.workspaceId, o.days))) throw new Error(`no workspace ${o.workspaceId}`);
    const detail = { retention_days: o.days };
    await recordAudit(
      trx,
      { workspaceId: o.workspaceId, actor: o.actor, action: 'workspace.retention_set', detail },
      now,
    );
  });
  return { ok: true };
}

/** The workspace's default language as set (null: none, English; also before migration 023). */
export const workspaceLocale = async (db: Db, workspaceId: string): Promise<Locale | null> => {
  const tag = (await findWorkspace(db.kysely, workspaceId))?.default_locale;
  return tag ? (parseLocaleSetting(tag) ?? null) : null;
};

/**
 * Sets the language new signing requests, instances and sends of the workspace take when they name none (a known
 * tag; `none`, empty or null: English), and records `workspace.locale_set`. Documents already sent keep theirs.
 */
export async function setWorkspaceLocale(
  db: Db,
  o: { workspaceId: string; locale: string | null; actor: string },
  now: number,
): Promise<{ ok: true; locale: Locale | null } | { ok: false; problem: 'locale' | 'unavailable' }> {
  const locale = o.locale === null ? null : parseLocaleSetting(o.locale);
  if (locale === undefined) return { ok: false, problem: 'locale' };
  if (!(await migrationApplied(db, '023-default-locale'))) return { ok: false, problem: 'unavailable' };
  await db.kysely.transaction().execute(async (trx) => {
    if (!(await setWorkspaceDefaultLocale(trx, o.workspaceId, locale)))
      throw new Error(`no workspace ${o.workspaceId}`);
    await recordAudit(
      trx,
      { workspaceId: o.workspaceId, actor: o.actor, action: 'workspace.locale_set', detail: { locale } },
      now,
    );
  });
  return { ok: true, locale };
}
