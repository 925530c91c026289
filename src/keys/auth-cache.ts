// API-key lookups for the /v1 gate, cached in-process by the key's SHA-256 (never the plaintext) on SQLite only.
// Exactness: an entry is used only while the database provably has not changed since just before it was read,
// i.e. the connection's `PRAGMA data_version` (commits by any other connection or process) and this process's
// write epoch (`authDataChanged`, called by every write to api_keys/workspaces here) both still match. A revoke
// from the CLI or another instance is therefore seen on the very next request. PostgreSQL has no equally cheap
// and exact signal, so there every request reads the database.
import type { ChangeProbe } from '../db/db.js';
import { safeEqual } from '../lib/crypto.js';
import type { AuthRow } from './keys.repo.js';

export type AuthEntry = {
  readonly id: string;
  readonly revoked: boolean;
  readonly rateLimit: number | null;
  /** null: no restriction (the stored list is empty). */
  readonly allowedIps: readonly string[] | null;
  readonly allowedOrigins: readonly string[];
  readonly workspace: Readonly<{ id: string; name: string; slug: string; tier: string }>;
};

export const AUTH_CACHE_SIZE = 5000;

let epoch = 0;

/** Marks every cached auth entry in this process stale. Same-connection commits never move data_version. */
export function authDataChanged(): void {
  epoch++;
}

/** Runs a write to api_keys/workspaces, then invalidates, even if it failed part-way (it may still have committed). */
export async function invalidatingAuth<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } finally {
    authDataChanged();
  }
}

function toEntry(row: AuthRow): AuthEntry {
  const ips = row.allowed_ips === '[]' ? null : (JSON.parse(row.allowed_ips) as string[]);
  return Object.freeze({
    id: row.id,
    revoked: row.revoked_at !== null,
    rateLimit: row.rate_limit,
    allowedIps: ips && Object.freeze(ips),
    allowedOrigins: Object.freeze(JSON.parse(row.allowed_origins) as string[]),
    workspace: Object.freeze({ id: row.workspace_id, name: row.ws_name, slug: row.ws_slug, tier: row.ws_tier }),
  });
}

export type AuthLookup = {
  /** A change-probe reading to pass to `cached`/`find`; null: unknown (inside a transaction) or no probe (PostgreSQL). */
  version(): number | null;
  /** The entry for this hash if one is cached and still exact at `version`; undefined: ask `find`. Synchronous. */
  cached(keyHash: string, version: number | null): AuthEntry | undefined;
  /** The key with this hash, revoked or not; undefined when there is none. `version` defaults to a fresh reading. */
  find(keyHash: string, version?: number | null): Promise<AuthEntry | undefined>;
  readonly size: number;
};

type Cached = { entry: AuthEntry; version: number; epoch: number };

export function createAuthLookup(opts: {
  load: (keyHash: string) => Promise<AuthRow | undefined>;
  /** Absent (PostgreSQL): no caching. */
  probe?: ChangeProbe;
  max?: number;
}): AuthLookup {
  const { load, probe } = opts;
  const max = opts.max ?? AUTH_CACHE_SIZE;
  // Insertion order is eviction order; entries are re-inserted whenever they are re-read, which is often enough.
  const cache = new Map<string, Cached>();

  const read = async (keyHash: string): Promise<AuthEntry | undefined> => {
    const row = await load(keyHash);
    return row && safeEqual(row.key_hash, keyHash) ? toEntry(row) : undefined;
  };

  const version = (): number | null => (probe ? probe.version() : null);

  return {
    version,
    cached(keyHash, at) {
      if (at === null) return undefined;
      const hit = cache.get(keyHash);
      return hit !== undefined && hit.version === at && hit.epoch === epoch ? hit.entry : undefined;
    },
    async find(keyHash, at = version()) {
      // Both stamps are taken before the read (the caller's reading too), so a change racing with it leaves the
      // entry already stale.
      const ep = epoch;
      if (at === null) return read(keyHash);
      const hit = cache.get(keyHash);
      if (hit !== undefined && hit.version === at && hit.epoch === ep) return hit.entry;
      const entry = await read(keyHash);
      cache.delete(keyHash);
      // Unknown keys are not cached: random bearer values must not evict real ones.
      if (entry !== undefined) {
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(keyHash, { entry, version: at, epoch: ep });
      }
      return entry;
    },
    get size() {
      return cache.size;
    },
  };
}
