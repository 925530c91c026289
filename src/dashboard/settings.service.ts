// The workspace's Settings page: what it shows, and the reminder default and retention it changes through the one service
// function the CLI uses too (workspaces/settings.service.ts), which writes the audit-log row in the same transaction.
import { MAX_AUTO_REMINDERS, REMINDER_AFTER_DAYS, REMINDER_EVERY_DAYS, RETENTION_DAYS } from '../limits.js';
import {
  parseReminderPolicy,
  parseRetentionDays,
  setWorkspaceReminders,
  setWorkspaceRetentionDays,
  workspaceReminders,
  workspaceRetention,
  type ReminderProblem,
} from '../workspaces/settings.service.js';
import { canManage, requireManager, type DashboardDeps } from './dashboard.service.js';
import { actorOf, type Viewer } from './people.service.js';
import type { Message } from './words.js';

export async function settings(deps: DashboardDeps, v: Viewer) {
  return {
    reminders: await workspaceReminders(deps.db, v.workspace.id),
    retention: await workspaceRetention(deps.db, v.workspace.id),
    canManage: canManage(v),
    bounds: {
      after: REMINDER_AFTER_DAYS,
      every: REMINDER_EVERY_DAYS,
      max: MAX_AUTO_REMINDERS,
      retention: RETENTION_DAYS,
    },
  };
}

/** The form field a refusal belongs to (the page shows it beside that field), or none for the page as a whole. */
export type ReminderField = 'after_days' | 'every_days';

const PROBLEMS: Record<ReminderProblem, { problem: Message; field?: ReminderField }> = {
  afterDays: { problem: { key: 'settings.badAfterDays', vars: { ...REMINDER_AFTER_DAYS } }, field: 'after_days' },
  everyDays: { problem: { key: 'settings.badEveryDays', vars: { ...REMINDER_EVERY_DAYS } }, field: 'every_days' },
  unavailable: { problem: { key: 'settings.unavailable' } },
};

/** The form's reminder default: `enabled` unchecked turns them off; else both day counts must be in bounds. */
export async function saveReminders(
  deps: DashboardDeps,
  v: Viewer,
  form: { enabled: boolean; afterDays: string; everyDays: string },
): Promise<{ ok: true } | { ok: false; problem: Message; field?: ReminderField }> {
  requireManager(v);
  const parsed = form.enabled
    ? parseReminderPolicy(form.afterDays, form.everyDays)
    : ({ ok: true, policy: null } as const);
  if (!parsed.ok) return { ok: false, ...PROBLEMS[parsed.problem] };
  const r = await setWorkspaceReminders(
    deps.db,
    { workspaceId: v.workspace.id, policy: parsed.policy, actor: actorOf(v) },
    deps.clock.now(),
  );
  return r.ok ? r : { ok: false, ...PROBLEMS[r.problem] };
}

/** The form's retention: empty keeps ended documents for ever; else whole days within RETENTION_DAYS. */
export async function saveRetention(
  deps: DashboardDeps,
  v: Viewer,
  form: { days: string },
): Promise<{ ok: true } | { ok: false; problem: Message }> {
  requireManager(v);
  const days = form.days.trim() === '' ? null : parseRetentionDays(form.days);
  if (form.days.trim() !== '' && days === null)
    return { ok: false, problem: { key: 'settings.badRetention', vars: { ...RETENTION_DAYS } } };
  const r = await setWorkspaceRetentionDays(
    deps.db,
    { workspaceId: v.workspace.id, days, actor: actorOf(v) },
    deps.clock.now(),
  );
  return r.ok ? r : { ok: false, problem: { key: 'settings.retentionUnavailable' } };
}
