// The workspace's Settings page: what it shows, and the workspace's face (name, reply-to, accent colour, logo), reminder
// default, retention and default language it changes through the one service function the CLI uses too (workspaces/face.service.ts,
// workspaces/settings.service.ts), which writes the audit-log rows in the same transaction.
import {
  BRAND_MIN_CONTRAST,
  LOGO_MAX_BYTES,
  LOGO_MAX_SIDE,
  MAX_AUTO_REMINDERS,
  REMINDER_AFTER_DAYS,
  REMINDER_EVERY_DAYS,
  RETENTION_DAYS,
  WORKSPACE_NAME_MAX,
} from '../limits.js';
import { LOCALE_NAMES } from '../i18n/i18n.js';
import { brandOf } from '../workspaces/brand.js';
import {
  updateWorkspaceFace,
  type FaceChanges,
  type FaceField,
  type FaceProblem,
  type FaceRefusal,
} from '../workspaces/face.service.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import {
  parseReminderPolicy,
  parseRetentionDays,
  setWorkspaceLocale,
  setWorkspaceReminders,
  setWorkspaceRetentionDays,
  workspaceLocale,
  workspaceReminders,
  workspaceRetention,
  type ReminderProblem,
} from '../workspaces/settings.service.js';
import { canManage, requireManager, type DashboardDeps } from './dashboard.service.js';
import { actorOf, type Viewer } from './people.service.js';
import type { Message } from './words.js';

export async function settings(deps: DashboardDeps, v: Viewer) {
  const row = await findWorkspace(deps.db.kysely, v.workspace.id);
  return {
    face: row ? { ...brandOf(row), replyTo: row.reply_to } : null,
    reminders: await workspaceReminders(deps.db, v.workspace.id),
    retention: await workspaceRetention(deps.db, v.workspace.id),
    defaultLocale: await workspaceLocale(deps.db, v.workspace.id),
    locales: LOCALE_NAMES,
    canManage: canManage(v),
    bounds: {
      after: REMINDER_AFTER_DAYS,
      every: REMINDER_EVERY_DAYS,
      max: MAX_AUTO_REMINDERS,
      retention: RETENTION_DAYS,
      name: WORKSPACE_NAME_MAX,
      contrast: BRAND_MIN_CONTRAST,
      logoKb: LOGO_MAX_BYTES / 1024,
      logoPx: LOGO_MAX_SIDE,
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

/** The form's default language: a known tag, or empty for none (English). */
export async function saveLocale(
  deps: DashboardDeps,
  v: Viewer,
  form: { locale: string },
): Promise<{ ok: true } | { ok: false; problem: Message }> {
  requireManager(v);
  const r = await setWorkspaceLocale(
    deps.db,
    { workspaceId: v.workspace.id, locale: form.locale, actor: actorOf(v) },
    deps.clock.now(),
  );
  if (r.ok) return r;
  return {
    ok: false,
    problem: { key: r.problem === 'locale' ? 'settings.badLanguage' : 'settings.languageUnavailable' },
  };
}

/** Each refusal of a face change in the page's words (the CLI prints the service's English reason instead). */
const FACE_PROBLEMS: Record<FaceProblem, (r: FaceRefusal) => Message> = {
  name: () => ({ key: 'settings.badName', vars: { max: WORKSPACE_NAME_MAX } }),
  reply_to: () => ({ key: 'settings.badReplyTo' }),
  color_format: () => ({ key: 'settings.badColorFormat' }),
  color_contrast: (r) => ({ key: 'settings.badColorContrast', vars: r.vars }),
  logo_type: (r) =>
    r.vars.format ? { key: 'settings.logoTypeNamed', vars: { format: r.vars.format } } : { key: 'settings.logoType' },
  logo_size: () => ({ key: 'settings.logoSize', vars: { max: `${LOGO_MAX_BYTES / 1024} KB` } }),
  logo_dimensions: (r) => ({ key: 'settings.logoDimensions', vars: r.vars }),
  logo_damaged: () => ({ key: 'settings.logoDamaged' }),
  unavailable: () => ({ key: 'settings.faceUnavailable' }),
};

export type FaceSaved = { ok: true } | { ok: false; problem: Message; field: FaceField | null };

async function saveFaceChanges(deps: DashboardDeps, v: Viewer, changes: FaceChanges): Promise<FaceSaved> {
  requireManager(v);
  const r = await updateWorkspaceFace(
    { db: deps.db, clock: deps.clock, blobs: deps.blobs },
    { workspaceId: v.workspace.id, actor: actorOf(v), changes },
  );
  return r.ok ? { ok: true } : { ok: false, problem: FACE_PROBLEMS[r.problem](r), field: r.field };
}

/** The Workspace form: name, reply-to (empty: none) and accent colour (empty: Signet's own), saved together. */
export const saveFace = (deps: DashboardDeps, v: Viewer, form: { name: string; replyTo: string; brandColor: string }) =>
  saveFaceChanges(deps, v, { name: form.name, replyTo: form.replyTo, brandColor: form.brandColor });

/** An uploaded logo: its bytes, or what the upload lacked (no file chosen; over the size limit, read no further). */
export function saveLogo(
  deps: DashboardDeps,
  v: Viewer,
  upload: { bytes: Uint8Array } | { missing: true } | { tooLarge: true },
): Promise<FaceSaved> {
  requireManager(v);
  if ('missing' in upload)
    return Promise.resolve({ ok: false, problem: { key: 'settings.logoMissing' }, field: 'logo' });
  if ('tooLarge' in upload)
    return Promise.resolve({ ok: false, problem: FACE_PROBLEMS.logo_size({} as FaceRefusal), field: 'logo' });
  return saveFaceChanges(deps, v, { logo: upload.bytes });
}

export const removeLogo = (deps: DashboardDeps, v: Viewer) => saveFaceChanges(deps, v, { logo: null });
