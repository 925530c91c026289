// API-key lookups for the /v1 gate, by the key's SHA-256 (never the plaintext), kept in an exact cache
// (db/exact-cache.ts): an entry is used only while the database's change probe has not moved since just before it
// was read. On SQLite a revoke from this process, the CLI or another instance is seen on the very next request; on
// PostgreSQL one made through this process is too, and one made elsewhere within the probe's bound (under 1 s,
// db/pg-change-probe.ts).
import type { ChangeProbe } from '../db/db.js';
import { createExactCache, type ExactCache } from '../db/exact-cache.js';
import { safeEqual } from '../lib/crypto.js';
import { compileAllowlist, type AllowlistMatcher } from '../lib/ip.js';
import type { AuthRow } from './keys.repo.js';

export type AuthEntry = {
  readonly id: string;
  readonly revoked: boolean;
  readonly rateLimit: number | null;
  /** null: no restriction (the stored list is empty). Compiled once per entry. */
  readonly allowIp: AllowlistMatcher | null;
  readonly allowedOrigins: readonly string[];
  readonly workspace: Readonly<{
    id: string;
    name: string;
    slug: string;
    tier: string;
    region?: string | null;
    defaultLocale?: string | null;
  }>;
};

export const AUTH_CACHE_SIZE = 5000;

function toEntry(row: AuthRow): AuthEntry {
  return Object.freeze({
    id: row.id,
    revoked: row.revoked_at !== null,
    rateLimit: row.rate_limit,
    allowIp: row.allowed_ips === '[]' ? null : compileAllowlist(JSON.parse(row.allowed_ips) as string[]),
    allowedOrigins: Object.freeze(JSON.parse(row.allowed_origins) as string[]),
    workspace: Object.freeze({
      id: row.workspace_id,
      name: row.ws_name,
      slug: row.ws_slug,
      tier: row.ws_tier,
      ...(row.ws_region ? { region: row.ws_region } : {}),
      ...(row.ws_default_locale ? { defaultLocale: row.ws_default_locale } : {}),
    }),
  });
}

/** Key hash → the key (revoked or not), or undefined when there is none. Unknown keys are never kept. */
export type AuthLookup = ExactCache<string, AuthEntry | undefined>;

export function createAuthLookup(o: {
  load: (keyHash: string) => Promise<AuthRow | undefined>;
  /** null: no caching. */
  probe: ChangeProbe | null;
  max?: number;
}): AuthLookup {
  return createExactCache({
    probe: o.probe,
    max: o.max ?? AUTH_CACHE_SIZE,
    async load(keyHash) {
      const row = await o.load(keyHash);
      return row && safeEqual(row.key_hash, keyHash) ? toEntry(row) : undefined;
    },
    // Random bearer values must not evict real keys.
    keep: (entry) => entry !== undefined,
  });
}
