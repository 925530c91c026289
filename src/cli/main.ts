// The `signet` operator CLI. Every command reads configuration from the environment (config.ts), prints one JSON
// object with --json, and fails with one line on stderr and a non-zero exit. Secrets are printed only at creation.
import os from 'node:os';
import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig, tiers, type Config } from '../config.js';
import { openDb, type Db } from '../db/db.js';
import { systemClock } from '../lib/clock.js';
import { presentKey } from '../keys/presenters.js';
import { findKey, listKeys } from '../keys/keys.repo.js';
import {
  createKeyAs,
  parseIpList,
  parseOriginList,
  revokeKeyAs,
  setKeyIpsAs,
  setKeyLimitAs,
  setKeyOriginsAs,
} from '../keys/keys.service.js';
import { ROLES, type Role } from '../dashboard/people.repo.js';
import { createUserLink } from '../dashboard/people.service.js';
import { createWorkspace, findWorkspace } from '../workspaces/workspaces.repo.js';
import { presentWorkspace } from '../workspaces/presenters.js';
import { findHookAnyWorkspace } from '../webhooks/hooks.repo.js';
import {
  deliveryStatuses,
  getDelivery,
  listDeliveries,
  replayDelivery,
  sendTestEvent,
} from '../webhooks/hooks.service.js';
import { DELIVERY_FILTERS } from '../webhooks/hooks.schemas.js';
import { createEmitter } from '../webhooks/outbox.repo.js';
import { listWorkspaceTemplates } from '../templates/templates.service.js';
import { listOutbox } from '../mail/outbox.js';
import { getSms, listSms } from '../sms/outbox.js';
import { SMS_STATUSES, type SmsStatus } from '../sms/outbox.repo.js';
import { JOB_NAMES } from '../jobs/names.js';

class CliError extends Error {}

const actor = () => `cli:${os.userInfo().username}`;
const print = (json: boolean, obj: unknown, human: string) => console.log(json ? JSON.stringify(obj) : human);

let config: Config;
/** Opens the database, migrating it unless SIGNET_AUTO_MIGRATE=0 (then only `signet migrate` does). */
async function withDb<T>(fn: (db: Db) => Promise<T>, o: { migrate?: boolean } = {}): Promise<T> {
  const db = await openDb(config.databaseUrl, { migrate: o.migrate ?? config.autoMigrate });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function mustKey(db: Db, id: string) {
  const key = await findKey(db.kysely, id);
  if (!key) throw new CliError(`no key ${id}`);
  return key;
}

/** Sends due deliveries from this process, for operators who run no worker while testing a hook. */
async function deliverNow(db: Db): Promise<number> {
  const [{ createDispatcher }, { newWorkerId: workerId }] = await Promise.all([
    import('../webhooks/dispatcher.js'),
    import('../runtime.js'),
  ]);
  const d = createDispatcher({
    db,
    clock: systemClock,
    workerId: workerId(),
    allowPrivateNetwork: config.allowPrivateNetwork,
  });
  const n = await d.runOnce();
  await d.stop();
  return n;
}

// The server, the PKI and the job catalogue are imported by the commands that use them, so that the other commands
// (and their callers: scripts, tests) do not pay for loading the whole application.
const runServer: typeof import('../main.js').runServer = async (...args) =>
  (await import('../main.js')).runServer(...args);

const program = new Command('signet').description('Signet e-signature service').exitOverride();

program
  .command('serve')
  .description('serve the API and run the background worker')
  .option('--no-worker', 'serve only; run `signet worker` elsewhere')
  .action(async (o: { worker: boolean }) => runServer(config, { api: true, worker: o.worker }));

program
  .command('worker')
  .description('run the background worker only (webhook deliveries, scheduled jobs)')
  .action(async () => runServer(config, { api: false, worker: true }));

program
  .command('migrate')
  .description('apply database migrations')
  .action(async () => withDb(async () => console.log('migrated'), { migrate: true }));

const workspace = program.command('workspace').description('workspaces');
workspace
  .command('create')
  .requiredOption('--name <name>', 'display name')
  .option('--tier <tier>', `one of ${tiers.join('|')}`, 'starter')
  .option('--reply-to <email>', 'reply-to address for e-mails sent for this workspace')
  .option('--json', 'print JSON')
  .action(async (o: { name: string; tier: string; replyTo?: string; json?: boolean }) => {
    const name = o.name.trim();
    if (!name || name.length > 200) throw new CliError('--name must be 1 to 200 characters');
    if (!(tiers as readonly string[]).includes(o.tier)) throw new CliError(`--tier must be one of ${tiers.join('|')}`);
    const ws = await withDb((db) =>
      createWorkspace(db.kysely, { name, tier: o.tier, replyTo: o.replyTo }, systemClock.now()),
    );
    print(!!o.json, { workspace: presentWorkspace(ws) }, `${ws.id}\t${ws.slug}\t${ws.tier}`);
  });

const key = program.command('key').description('API keys');
key
  .command('create')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--legacy', 'mint a legacy lgk_live_ key')
  .option('--json', 'print JSON')
  .action(async (o: { workspace: string; legacy?: boolean; json?: boolean }) => {
    const out = await withDb(async (db) => {
      if (!(await findWorkspace(db.kysely, o.workspace))) throw new CliError(`no workspace ${o.workspace}`);
      return createKeyAs(
        db.kysely,
        { workspaceId: o.workspace, legacy: !!o.legacy, actor: actor() },
        systemClock.now(),
      );
    });
    const k = {
      id: out.key.id,
      label: out.key.label,
      workspace_id: out.key.workspace_id,
      created_at: new Date(out.key.created_at).toISOString(),
    };
    print(!!o.json, { key: k, plaintext: out.plaintext }, `${out.plaintext}\n(shown once; key id ${k.id})`);
  });

key
  .command('revoke <keyId>')
  .option('--actor <who>', 'recorded as the revoker', actor())
  .option('--json', 'print JSON')
  .action(async (keyId: string, o: { actor: string; json?: boolean }) => {
    const k = await withDb(async (db) => {
      await revokeKeyAs(db.kysely, await mustKey(db, keyId), o.actor, systemClock.now());
      return (await findKey(db.kysely, keyId))!;
    });
    print(
      !!o.json,
      { key: presentKey(k) },
      `revoked ${k.id} at ${new Date(k.revoked_at!).toISOString()} by ${k.revoked_by}`,
    );
  });

key
  .command('list')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--json', 'print JSON')
  .action(async (o: { workspace: string; json?: boolean }) => {
    const keys = (await withDb((db) => listKeys(db.kysely, o.workspace))).map(presentKey);
    print(
      !!o.json,
      { keys },
      keys
        .map(
          (k) =>
            `${k.id}\t${k.label}…\tcreated ${k.created_at}\tlast used ${k.last_used_at ?? 'never'}${k.revoked_at ? `\trevoked ${k.revoked_at}` : ''}`,
        )
        .join('\n') || '(no keys)',
    );
  });

key
  .command('set-ips <keyId> [entries...]')
  .description('replace the allowed IP list (IPv4/IPv6 addresses and CIDR blocks; at most 50)')
  .option('--clear', 'empty the list (any address allowed)')
  .option('--json', 'print JSON')
  .action(async (keyId: string, entries: string[], o: { clear?: boolean; json?: boolean }) => {
    if (o.clear && entries.length) throw new CliError('--clear takes no entries');
    if (!o.clear && !entries.length) throw new CliError('give entries, or --clear to empty the list');
    const r = parseIpList(o.clear ? [] : entries);
    if (!r.ok) throw new CliError(r.message);
    await withDb(async (db) => setKeyIpsAs(db.kysely, await mustKey(db, keyId), r.list, actor(), systemClock.now()));
    print(!!o.json, { key_id: keyId, allowed_ips: r.list }, r.list.join('\n') || '(empty: any address allowed)');
  });

key
  .command('set-origins <keyId> [origins...]')
  .description('replace the allowed embed origins (plain https origins)')
  .option('--clear', 'empty the list')
  .option('--json', 'print JSON')
  .action(async (keyId: string, origins: string[], o: { clear?: boolean; json?: boolean }) => {
    if (o.clear && origins.length) throw new CliError('--clear takes no origins');
    if (!o.clear && !origins.length) throw new CliError('give origins, or --clear to empty the list');
    const r = parseOriginList(o.clear ? [] : origins);
    if (!r.ok) throw new CliError(r.message);
    await withDb(async (db) =>
      setKeyOriginsAs(db.kysely, await mustKey(db, keyId), r.list, actor(), systemClock.now()),
    );
    print(!!o.json, { key_id: keyId, allowed_origins: r.list }, r.list.join('\n') || '(empty)');
  });

key
  .command('set-limit <keyId> <n>')
  .description('requests per 60-second window for this key (default 60)')
  .option('--json', 'print JSON')
  .action(async (keyId: string, n: string, o: { json?: boolean }) => {
    if (!/^\d+$/.test(n) || Number(n) < 1 || Number(n) > 1_000_000)
      throw new CliError('N must be an integer 1 to 1000000');
    await withDb(async (db) =>
      setKeyLimitAs(db.kysely, await mustKey(db, keyId), Number(n), actor(), systemClock.now()),
    );
    print(!!o.json, { key_id: keyId, rate_limit: Number(n) }, `${keyId}: ${n} requests per 60 s`);
  });

const user = program.command('user').description('dashboard users');
user
  .command('create')
  .description('add a person to a workspace and print a one-time set-password link (valid 72 hours)')
  .requiredOption('--email <address>', 'their e-mail address')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--role <role>', `owner, admin or member`, 'owner')
  .option('--json', 'print JSON')
  .action(async (o: { email: string; workspace: string; role: string; json?: boolean }) => {
    if (!(ROLES as readonly string[]).includes(o.role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}`);
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

const deliveries = program.command('deliveries').description('webhook deliveries');
deliveries
  .command('list')
  .option('--hook <id>', 'only this hook')
  .option('--workspace <id>', 'only this workspace')
  .option('--status <status>', `only this state: ${DELIVERY_FILTERS.join('|')} (failed = retrying and giving_up)`)
  .option('--limit <n>', 'at most n rows', '50')
  .option('--json', 'print JSON')
  .action(async (o: { hook?: string; workspace?: string; status?: string; limit: string; json?: boolean }) => {
    if (o.status !== undefined && !(DELIVERY_FILTERS as readonly string[]).includes(o.status))
      throw new CliError(`--status must be one of ${DELIVERY_FILTERS.join('|')}`);
    const statuses = deliveryStatuses(o.status);
    const rows = await withDb((db) =>
      listDeliveries(db, { hookId: o.hook, workspaceId: o.workspace, statuses, limit: Number(o.limit) || 50 }),
    );
    print(
      !!o.json,
      { deliveries: rows },
      rows
        .map(
          (d) =>
            `${d.id}\t${d.event}\t${d.status}\tattempts ${d.attempts}\tnext ${d.next_attempt_at ?? '-'}` +
            (d.last_error ? `\t${d.last_error}` : ''),
        )
        .join('\n') || '(none)',
    );
  });

deliveries
  .command('replay <deliveryId>')
  .description('send the event again to the same hook (same event_id), as a new delivery; not for a deleted hook')
  .option('--now', 'deliver from this process instead of waiting for the worker')
  .option('--json', 'print JSON')
  .action(async (id: string, o: { now?: boolean; json?: boolean }) => {
    const d = await withDb(async (db) => {
      // The API's replay (hooks.service.ts), unscoped: an operator may replay any workspace's delivery.
      const replayed = await replayDelivery({ db, clock: systemClock, wakeDeliveries: () => undefined }, id);
      if (!replayed) {
        if (await getDelivery(db, id)) throw new CliError(`the hook of delivery ${id} is deleted; nothing replayed`);
        throw new CliError(`no delivery ${id}`);
      }
      if (o.now) await deliverNow(db);
      return (await getDelivery(db, replayed.delivery_id))!;
    });
    print(!!o.json, { delivery: d }, `${d.id}\t${d.status}`);
  });

program
  .command('hooks')
  .description('webhooks')
  .command('test <hookId>')
  .description("send the synthetic test event, signed with the hook's secret")
  .option('--now', 'deliver from this process instead of waiting for the worker')
  .option('--json', 'print JSON')
  .action(async (hookId: string, o: { now?: boolean; json?: boolean }) => {
    const out = await withDb(async (db) => {
      const hook = await findHookAnyWorkspace(db.kysely, hookId);
      if (!hook) throw new CliError(`no hook ${hookId}`);
      const r = await sendTestEvent(
        { db, clock: systemClock, emit: createEmitter(systemClock), wakeDeliveries: () => undefined },
        hook.workspace_id,
        hook.id,
      );
      if (o.now) await deliverNow(db);
      return r;
    });
    print(!!o.json, { event_id: out.eventId, hook_id: hookId }, `queued ${out.eventId} for ${hookId}`);
  });

program
  .command('pki')
  .description('seal certificate authority')
  .command('export-ca')
  .description(
    'print the CA certificate (PEM) that issues the seal and timestamp certificates; add it to your trust store',
  )
  .action(async () => {
    const { loadOrCreatePki } = await import('../pki/pki.js');
    const pki = await loadOrCreatePki({
      dataDir: config.dataDir,
      clock: systemClock,
      sealP12: config.sealP12 ?? undefined,
      sealP12Password: config.sealP12Password,
    });
    process.stdout.write(pki.caCertPem.endsWith('\n') ? pki.caCertPem : `${pki.caCertPem}\n`);
  });

program
  .command('mail')
  .description('outgoing mail')
  .command('list')
  .option('--document <id>', 'only mail about this document')
  .option('--to <email>', 'only mail to this address')
  .option('--json', 'print JSON')
  .action(async (o: { document?: string; to?: string; json?: boolean }) => {
    const rows = await withDb((db) => listOutbox(db, { documentId: o.document, to: o.to }));
    print(
      !!o.json,
      { mail: rows },
      rows.map((m) => `${m.id}\t${m.status}\t${m.to_email}\t${m.subject}`).join('\n') || '(none)',
    );
  });

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

const sms = program.command('sms').description('outgoing text messages');
sms
  .command('list')
  .option('--status <status>', `only this status: ${SMS_STATUSES.join('|')}`)
  .option('--limit <n>', 'at most n rows (1 to 500)', '50')
  .option('--json', 'print JSON')
  .action(async (o: { status?: string; limit: string; json?: boolean }) => {
    if (o.status !== undefined && !(SMS_STATUSES as readonly string[]).includes(o.status))
      throw new CliError(`--status must be one of ${SMS_STATUSES.join('|')}`);
    const rows = await withDb((db) =>
      listSms(db, { status: o.status as SmsStatus | undefined, limit: Number(o.limit) || 50 }),
    );
    print(
      !!o.json,
      { sms: rows },
      rows
        .map((m) => `${m.id}\t${m.status}\t${m.to}\t${m.template}\tattempts ${m.attempts}\t${m.created_at}`)
        .join('\n') || '(none)',
    );
  });

sms
  .command('show <id>')
  .description("one message with its text (which carries the signer's link)")
  .option('--json', 'print JSON')
  .action(async (id: string, o: { json?: boolean }) => {
    const m = await withDb((db) => getSms(db, id));
    if (!m) throw new CliError(`no sms ${id}`);
    print(!!o.json, { sms: m }, `${m.id}\t${m.status}\t${m.to}\t${m.template}\n${m.body}`);
  });

program
  .command('jobs')
  .description('scheduled jobs')
  .command('run <name>')
  .description(`run one job once now: ${JOB_NAMES.join(', ')}`)
  .option('--json', 'print JSON')
  .action(async (name: string, o: { json?: boolean }) => {
    const [{ scheduledJobs }, { runJob }] = await Promise.all([
      import('../runtime.js'),
      import('../jobs/scheduler.js'),
    ]);
    const r = await withDb((db) => runJob(scheduledJobs({ db, clock: systemClock }), name));
    print(!!o.json, { job: name, result: r }, `${name}: ${JSON.stringify(r)}`);
  });

try {
  config = loadConfig();
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  if (err instanceof ConfigError || err instanceof CliError) {
    console.error(`signet: ${err.message}`);
    process.exit(1);
  }
  console.error(`signet: ${(err as Error).message}`);
  process.exit(1);
}
