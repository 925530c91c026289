// `signet key …`: mint, revoke and list API keys; set a key's IP allowlist, embed origins and rate limit.
import type { Command } from 'commander';
import type { Db } from '../db/db.js';
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
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import { CliError, actor, print, withDb } from './context.js';

async function mustKey(db: Db, id: string) {
  const key = await findKey(db.kysely, id);
  if (!key) throw new CliError(`no key ${id}`);
  return key;
}

export function addKeyCommands(program: Command): void {
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
}
