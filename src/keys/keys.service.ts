// Operator actions on API keys, shared by the CLI and the dashboard so both apply the same rules, print the same
// refusals and leave the same audit-log rows. Each change and its audit row commit together.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { canonicaliseAllowlist } from '../lib/ip.js';
import { recordAudit } from '../audit/audit-log.repo.js';
import { canonicaliseOrigins } from './origins.js';
import { createKey, revokeKey, setAllowedIps, setAllowedOrigins, setRateLimit, type ApiKey } from './keys.repo.js';

type Db = Kysely<Database>;
export type ListResult = { ok: true; list: string[] } | { ok: false; message: string };

const refusal = (r: { entry: string; reason: string }, what: 'entry' | 'origin') =>
  r.entry ? `refused ${what} "${r.entry}": ${r.reason}; nothing saved` : `${r.reason}; nothing saved`;

/** The allowed-IP list as it would be stored, or the one message that refuses it (the CLI prints the same). */
export function parseIpList(entries: string[]): ListResult {
  const r = canonicaliseAllowlist(entries);
  return r.ok ? { ok: true, list: r.list } : { ok: false, message: refusal(r, 'entry') };
}

export function parseOriginList(origins: string[]): ListResult {
  const r = canonicaliseOrigins(origins);
  return r.ok ? { ok: true, list: r.list } : { ok: false, message: refusal(r, 'origin') };
}

export async function createKeyAs(
  db: Db,
  o: { workspaceId: string; legacy: boolean; actor: string },
  now: number,
): Promise<{ key: ApiKey; plaintext: string }> {
  return db.transaction().execute(async (trx) => {
    const r = await createKey(trx, { workspaceId: o.workspaceId, legacy: o.legacy }, now);
    await recordAudit(
      trx,
      { workspaceId: o.workspaceId, actor: o.actor, action: 'key.created', targetId: r.key.id },
      now,
    );
    return r;
  });
}

/** Revokes once (a second revoke keeps the first who and when); true when this call revoked it. */
export async function revokeKeyAs(db: Db, key: ApiKey, actor: string, now: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await revokeKey(trx, key.id, actor, now))) return false;
    await recordAudit(trx, { workspaceId: key.workspace_id, actor, action: 'key.revoked', targetId: key.id }, now);
    return true;
  });
}

/** Writes one setting of a key and its audit row (`action`, the new value as detail) in one transaction. */
async function changeKeyAs<T>(
  db: Db,
  key: ApiKey,
  actor: string,
  now: number,
  change: { action: string; value: T; write(trx: Db, id: string, value: T): Promise<unknown> },
): Promise<void> {
  const { action, value, write } = change;
  await db.transaction().execute(async (trx) => {
    await write(trx, key.id, value);
    await recordAudit(trx, { workspaceId: key.workspace_id, actor, action, targetId: key.id, detail: value }, now);
  });
}

export const setKeyIpsAs = (db: Db, key: ApiKey, list: string[], actor: string, now: number) =>
  changeKeyAs(db, key, actor, now, { action: 'key.ips_set', value: list, write: setAllowedIps });

export const setKeyOriginsAs = (db: Db, key: ApiKey, list: string[], actor: string, now: number) =>
  changeKeyAs(db, key, actor, now, { action: 'key.origins_set', value: list, write: setAllowedOrigins });

/** Requests per 60-second window for this key (`signet key set-limit`). */
export const setKeyLimitAs = (db: Db, key: ApiKey, limit: number, actor: string, now: number) =>
  changeKeyAs(db, key, actor, now, { action: 'key.limit_set', value: limit, write: setRateLimit });
