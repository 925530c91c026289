// The workspace's Settings page: what it shows, and the reminder default it changes through the one service
// function the CLI uses too (workspaces/settings.service.ts), which writes the audit-log row in the same transaction.
import { MAX_AUTO_REMINDERS, REMINDER_AFTER_DAYS, REMINDER_EVERY_DAYS } from '../limits.js';
import {
  parseReminderPolicy,
  setWorkspaceReminders,
  workspaceReminders,
  type ReminderProblem,
} from '../workspaces/settings.service.js';
import { canManage, requireManager, type DashboardDeps } from './dashboard.service.js';
import { actorOf, type Viewer } from './people.service.js';
import type { Message } from './words.js';

export async function settings(deps: DashboardDeps, v: Viewer) {
  return {
    reminders: await workspaceReminders(deps.db, v.workspace.id),
    canManage: canManage(v),
    bounds: { after: REMINDER_AFTER_DAYS, every: REMINDER_EVERY_DAYS, max: MAX_AUTO_REMINDERS },
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
