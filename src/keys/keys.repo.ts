// API keys: only the SHA-256 of the plaintext and its 12-character label are stored; the plaintext is shown once.
import { hash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ApiKeysTable, Database } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import { randomHex } from '../lib/crypto.js';

export const CURRENT_PREFIX = 'svk_live_';
export const LEGACY_PREFIX = 'lgk_live_';
const KEY_SHAPE = /^(svk_live_|lgk_live_)[0-9a-f]{32}$/;

export type ApiKey = ApiKeysTable;

/** Shape check done before any lookup: a bearer value that is not one of our two key forms never reaches the db. */
export const looksLikeKey = (token: string): boolean => KEY_SHAPE.test(token);

// One-shot crypto.hash: it runs on every authenticated request and is about 3x cheaper than createHash.
export const hashKey = (plaintext: string): string => hash('sha256', plaintext, 'hex');

export async function createKey(
  db: Kysely<Database>,
  input: { workspaceId: string; legacy: boolean },
  now: number,
): Promise<{ key: ApiKey; plaintext: string }> {
  const plaintext = `${input.legacy ? LEGACY_PREFIX : CURRENT_PREFIX}${randomHex(16)}`;
  const key: ApiKey = {
    id: newId('key'),
    workspace_id: input.workspaceId,
    label: plaintext.slice(0, 12),
    key_hash: hashKey(plaintext),
    legacy: input.legacy ? 1 : 0,
    created_at: now,
    last_used_at: null,
    last_used_ip: null,
    revoked_at: null,
    revoked_by: null,
    rate_limit: null,
    allowed_ips: '[]',
    allowed_origins: '[]',
  };
  await db.insertInto('api_keys').values(key).execute();
  return { key, plaintext };
}

export type AuthRow = {
  id: string;
  key_hash: string;
  workspace_id: string;
  revoked_at: number | null;
  rate_limit: number | null;
  allowed_ips: string;
  allowed_origins: string;
  ws_name: string;
  ws_slug: string;
  ws_tier: string;
  /** The workspace's hosting region (migration 022); absent when not read. */
  ws_region?: string | null;
  /** The workspace's default language (migration 023); absent when not read. */
  ws_default_locale?: string | null;
};

/**
 * The key with this hash and its workspace: what the /v1 gate needs, in one read. `region`: also the workspace's
 * region, only once migration 022 has run; `defaultLocale`: its default language, once 023 has (a server ahead of
 * its schema keeps serving).
 */
export const findKeyForAuth = (
  db: Kysely<Database>,
  keyHash: string,
  o: { region?: boolean; defaultLocale?: boolean } = {},
): Promise<AuthRow | undefined> =>
  db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .select([
      'api_keys.id',
      'api_keys.key_hash',
      'api_keys.workspace_id',
      'api_keys.revoked_at',
      'api_keys.rate_limit',
      'api_keys.allowed_ips',
      'api_keys.allowed_origins',
      'workspaces.name as ws_name',
      'workspaces.slug as ws_slug',
      'workspaces.tier as ws_tier',
    ])
    .$if(o.region === true, (q) => q.select('workspaces.region as ws_region'))
    .$if(o.defaultLocale === true, (q) => q.select('workspaces.default_locale as ws_default_locale'))
    .where('api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();

export const findKey = (db: Kysely<Database>, id: string) =>
  db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();

export const listKeys = (db: Kysely<Database>, workspaceId: string) =>
  db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();

/** Revokes once; a second revoke keeps the first record of who and when. */
export async function revokeKey(db: Kysely<Database>, id: string, actor: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('api_keys')
    .set({ revoked_at: now, revoked_by: actor })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export const setAllowedIps = (db: Kysely<Database>, id: string, list: string[]) =>
  db
    .updateTable('api_keys')
    .set({ allowed_ips: JSON.stringify(list) })
    .where('id', '=', id)
    .execute();

export const setAllowedOrigins = (db: Kysely<Database>, id: string, list: string[]) =>
  db
    .updateTable('api_keys')
    .set({ allowed_origins: JSON.stringify(list) })
    .where('id', '=', id)
    .execute();

export const setRateLimit = (db: Kysely<Database>, id: string, limit: number | null) =>
  db.updateTable('api_keys').set({ rate_limit: limit }).where('id', '=', id).execute();

export async function recordLastUsed(
  db: Kysely<Database>,
  entries: Iterable<[string, { at: number; ip: string | null }]>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const [id, u] of entries) {
      await trx.updateTable('api_keys').set({ last_used_at: u.at, last_used_ip: u.ip }).where('id', '=', id).execute();
    }
  });
}
