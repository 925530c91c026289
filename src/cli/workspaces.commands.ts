// `signet workspace create|reminders|update` (name, reply-to, brand colour, logo, retention, language), `user create` and
// `templates list`: a workspace, its settings, its dashboard people, its templates.
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { tiers } from '../config.js';
import { migrationApplied } from '../db/migrate.js';
import { systemClock } from '../lib/clock.js';
import { ROLES, type Role } from '../dashboard/people.repo.js';
import { createUserLink } from '../dashboard/people.service.js';
import { createWorkspace, findWorkspace } from '../workspaces/workspaces.repo.js';
import { presentWorkspace } from '../workspaces/presenters.js';
import {
  parseReminderPolicy,
  parseRetentionDays,
  setWorkspaceReminders,
  setWorkspaceLocale,
  setWorkspaceRetentionDays,
  workspaceReminders,
  type ReminderProblem,
} from '../workspaces/settings.service.js';
import { isKnownLocale, KNOWN_LOCALES } from '../i18n/i18n.js';
import {
  BRAND_MIN_CONTRAST,
  LOGO_MAX_BYTES,
  LOGO_MAX_SIDE,
  REMINDER_AFTER_DAYS,
  REMINDER_EVERY_DAYS,
  RETENTION_DAYS,
  WORKSPACE_NAME_MAX,
} from '../limits.js';
import { createBlobStore } from '../documents/blob-store.js';
import { isEmailAddress } from '../lib/email.js';
import { logoTooBig } from '../workspaces/brand-rules.js';
import {
  checkFaceChanges,
  updateWorkspaceFace,
  workspaceSettings,
  type FaceChanges,
} from '../workspaces/face.service.js';
import { listWorkspaceTemplates } from '../templates/templates.service.js';
import { CliError, actor, config, print, withDb } from './context.js';

export function addWorkspaceCommands(program: Command): void {
  const workspace = program.command('workspace').description('workspaces');
  workspace
    .command('create')
    .requiredOption('--name <name>', 'display name')
    .option('--tier <tier>', `one of ${tiers.join('|')}`, 'starter')
    .option('--reply-to <email>', 'reply-to address for e-mails sent for this workspace')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; tier: string; replyTo?: string; json?: boolean }) => {
      const name = o.name.trim();
      if (!name || name.length > WORKSPACE_NAME_MAX)
        throw new CliError(`--name must be 1 to ${WORKSPACE_NAME_MAX} characters`);
      if (o.replyTo !== undefined && !isEmailAddress(o.replyTo.trim()))
        throw new CliError(`--reply-to "${o.replyTo}" is not a plain e-mail address like name@example.com`);
      if (!(tiers as readonly string[]).includes(o.tier))
        throw new CliError(`--tier must be one of ${tiers.join('|')}`);
      // The deployment's region is recorded on the workspace now and kept, whatever SIGNET_REGION says later.
      const region = config.region;
      const ws = await withDb(async (db) => {
        if (region && !(await migrationApplied(db, '022-workspace-face')))
          throw new CliError('SIGNET_REGION needs migration 022-workspace-face; run signet migrate first');
        return createWorkspace(
          db.kysely,
          { name, tier: o.tier, replyTo: o.replyTo?.trim(), region },
          systemClock.now(),
        );
      });
      print(
        !!o.json,
        { workspace: presentWorkspace(ws) },
        `${ws.id}\t${ws.slug}\t${ws.tier}${ws.region ? `\t${ws.region}` : ''}`,
      );
    });
  workspace
    .command('reminders')
    .description('show or set the default automatic reminders of new signing requests (those naming none)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option(
      '--after-days <n>',
      `first reminder this many days after the invitation (${REMINDER_AFTER_DAYS.min} to ${REMINDER_AFTER_DAYS.max})`,
    )
    .option('--every-days <n>', `then every this many days (${REMINDER_EVERY_DAYS.min} to ${REMINDER_EVERY_DAYS.max})`)
    .option('--off', 'no automatic reminders by default')
    .option('--json', 'print JSON')
    .action(async (o: { workspace: string; afterDays?: string; everyDays?: string; off?: boolean; json?: boolean }) => {
      const setting = o.afterDays !== undefined || o.everyDays !== undefined;
      if (o.off && setting) throw new CliError('give either --off or --after-days with --every-days, not both');
      if (setting && (o.afterDays === undefined || o.everyDays === undefined))
        throw new CliError('--after-days and --every-days go together');
      const policy = await withDb(async (db) => {
        if (!(await findWorkspace(db.kysely, o.workspace))) throw new CliError(`no workspace ${o.workspace}`);
        if (o.off || setting) {
          const parsed = o.off
            ? ({ ok: true, policy: null } as const)
            : parseReminderPolicy(o.afterDays!, o.everyDays!);
          if (!parsed.ok) throw new CliError(REMINDER_REFUSALS[parsed.problem]);
          const r = await setWorkspaceReminders(
            db,
            { workspaceId: o.workspace, policy: parsed.policy, actor: actor() },
            systemClock.now(),
          );
          if (!r.ok) throw new CliError(REMINDER_REFUSALS[r.problem]);
        }
        return workspaceReminders(db, o.workspace);
      });
      const human = policy
        ? `reminders: first after ${policy.after_days} days, then every ${policy.every_days} days`
        : 'reminders: off';
      print(!!o.json, { workspace_id: o.workspace, reminders: policy }, human);
    });
  workspace
    .command('update')
    .description('change a workspace’s settings; prints them')
    .argument('<workspace>', 'workspace id')
    .option('--name <name>', `display name (1 to ${WORKSPACE_NAME_MAX} characters)`)
    .option('--reply-to <email>', 'Reply-To of every e-mail sent for the workspace')
    .option('--no-reply-to', 'no Reply-To')
    .option(
      '--brand-color <#RRGGBB|none>',
      `accent colour, at least ${BRAND_MIN_CONTRAST}:1 against white text and the page backgrounds; none: Signet’s`,
    )
    .option(
      '--logo <file>',
      `PNG or JPEG, at most ${LOGO_MAX_BYTES / 1024} KB and ${LOGO_MAX_SIDE}×${LOGO_MAX_SIDE} px`,
    )
    .option('--no-logo', 'remove the logo')
    .option(
      '--retention-days <n|off>',
      `purge ended documents this many days after they ended (${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}); ` +
        '`off` keeps them for ever',
    )
    .option(
      '--locale <tag|none>',
      `language of requests and sends that name none: one of ${KNOWN_LOCALES.join(', ')}; none: English`,
    )
    .option('--json', 'print JSON')
    .action(async (id: string, o: UpdateOptions) => {
      const days =
        o.retentionDays === undefined || o.retentionDays === 'off' ? null : parseRetentionDays(o.retentionDays);
      if (o.retentionDays !== undefined && o.retentionDays !== 'off' && days === null)
        throw new CliError(
          `--retention-days must be a whole number from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}, or off`,
        );
      if (o.locale !== undefined && o.locale !== 'none' && !isKnownLocale(o.locale))
        throw new CliError(`--locale must be one of ${KNOWN_LOCALES.join(', ')}, or none`);
      const changes: FaceChanges = {
        ...(o.name !== undefined ? { name: o.name } : {}),
        ...(o.replyTo !== undefined ? { replyTo: o.replyTo === false ? null : o.replyTo } : {}),
        ...(o.brandColor !== undefined ? { brandColor: o.brandColor === 'none' ? null : o.brandColor } : {}),
        ...(o.logo !== undefined ? { logo: o.logo === false ? null : await readLogo(o.logo) } : {}),
      };
      // Every value is checked before anything is written, so a refusal leaves the workspace as it was.
      const checked = checkFaceChanges(changes);
      if (!checked.ok) throw new CliError(checked.reason);
      const settings = await withDb(async (db) => {
        if (!(await findWorkspace(db.kysely, id))) throw new CliError(`no workspace ${id}`);
        if (Object.keys(changes).length) {
          const deps = { db, clock: systemClock, blobs: createBlobStore(db, systemClock, config.dataDir) };
          const r = await updateWorkspaceFace(deps, { workspaceId: id, actor: actor(), changes });
          if (!r.ok) throw new CliError(r.reason);
        }
        if (o.retentionDays !== undefined) {
          const r = await setWorkspaceRetentionDays(db, { workspaceId: id, days, actor: actor() }, systemClock.now());
          if (!r.ok) throw new CliError('retention needs migration 021-purge; run signet migrate first');
        }
        if (o.locale !== undefined) {
          const r = await setWorkspaceLocale(
            db,
            { workspaceId: id, locale: o.locale, actor: actor() },
            systemClock.now(),
          );
          if (!r.ok) throw new CliError('--locale needs migration 023-default-locale; run signet migrate first');
        }
        return (await workspaceSettings(db, id, config.baseUrl))!;
      });
      const s = settings;
      const human = [
        `name: ${s.name}`,
        `reply-to: ${s.reply_to ?? 'none'}`,
        `brand colour: ${s.brand_color ?? 'none'}`,
        `logo: ${s.logo ? `${s.logo.type} ${s.logo.url}` : 'none'}`,
        `region: ${s.region ?? 'none'}`,
        s.retention_days === null
          ? 'retention: keep for ever'
          : `retention: purge ${s.retention_days} days after the end`,
        `language: ${s.default_locale ?? 'none (English)'}`,
      ].join('\n');
      print(!!o.json, settings, human);
    });
}

type UpdateOptions = {
  name?: string;
  replyTo?: string | false;
  brandColor?: string;
  logo?: string | false;
  retentionDays?: string;
  locale?: string;
  json?: boolean;
};

/** The logo file's bytes; one over the size limit is refused by its size without being read. */
async function readLogo(file: string): Promise<Uint8Array> {
  let size: number;
  try {
    size = (await fs.stat(file)).size;
    if (size > LOGO_MAX_BYTES) throw new CliError(logoTooBig(size).reason);
    return new Uint8Array(await fs.readFile(file));
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read --logo ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

const REMINDER_REFUSALS: Record<ReminderProblem, string> = {
  afterDays: `--after-days must be a whole number from ${REMINDER_AFTER_DAYS.min} to ${REMINDER_AFTER_DAYS.max}`,
  everyDays: `--every-days must be a whole number from ${REMINDER_EVERY_DAYS.min} to ${REMINDER_EVERY_DAYS.max}`,
  unavailable: 'reminders need migration 012-reminders; run signet migrate first',
};

export function addUserCommands(program: Command): void {
  const user = program.command('user').description('dashboard users');
  user
    .command('create')
    .description('add a person to a workspace and print a one-time set-password link (valid 72 hours)')
    .requiredOption('--email <address>', 'their e-mail address')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--role <role>', `owner, admin or member`, 'owner')
    .option('--json', 'print JSON')
    .action(async (o: { email: string; workspace: string; role: string; json?: boolean }) => {
      if (!(ROLES as readonly string[]).includes(o.role))
        throw new CliError(`--role must be one of ${ROLES.join(', ')}`);
      const r = await withDb(async (db) => {
        if (!(await findWorkspace(db.kysely, o.workspace))) throw new CliError(`no workspace ${o.workspace}`);
        try {
          return await createUserLink(
            { db, clock: systemClock, config },
            { email: o.email, workspaceId: o.workspace, role: o.role as Role, by: actor() },
          );
        } catch (err) {
          throw new CliError((err as Error).message);
        }
      });
      print(
        !!o.json,
        {
          user: { id: r.userId, email: r.email, workspace_id: o.workspace, role: o.role },
          set_password_url: r.url,
          expires_at: new Date(r.expiresAt).toISOString(),
        },
        `${r.url}\n(one-time link for ${r.email}; valid until ${new Date(r.expiresAt).toISOString()})`,
      );
    });
}

export function addTemplateCommands(program: Command): void {
  program
    .command('templates')
    .description('templates')
    .command('list')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--archived', 'include archived templates')
    .option('--json', 'print JSON')
    .action(async (o: { workspace: string; archived?: boolean; json?: boolean }) => {
      const templates = await withDb((db) =>
        listWorkspaceTemplates({ db }, o.workspace, { archived: !!o.archived, limit: 100 }),
      );
      print(
        !!o.json,
        { templates },
        templates
          .map((t) => `${t.id}	v${t.current_version}	${t.name}${t.archived_at ? `	archived ${t.archived_at}` : ''}`)
          .join('\n') || '(no templates)',
      );
    });
}
