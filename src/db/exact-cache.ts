// An in-process cache for hot reads. Guarantee: a value is served only while the database's change probe still
// gives the reading taken just before the value was loaded, i.e. nothing it watches was written since by any
// connection or process, this one included (SQLite: db.ts, exact; PostgreSQL: pg-change-probe.ts, exact for this
// process's writes, within its notice bound for others'). Without a probe or without a reading (inside a SQLite
// transaction, PostgreSQL notices lost) nothing is cached. Beyond `max` entries the oldest goes first.
import type { ChangeProbe } from './db.js';

export type ExactCache<K, V> = {
  /** A probe reading to validate against; null: nothing can be served from memory now. */
  version(): number | null;
  /** The value if it is cached and still exact at `version`; undefined otherwise. Synchronous. */
  get(key: K, version: number | null): V | undefined;
  /** The cached value if still exact at `version` (default: a fresh reading), else a fresh load. */
  load(key: K, version?: number | null): Promise<V>;
  readonly size: number;
};

export function createExactCache<K, V>(o: {
  probe: ChangeProbe | null;
  load(key: K): Promise<V>;
  max: number;
  /** Whether a loaded value is kept (e.g. not an unknown key, so random keys cannot evict real ones). */
  keep?(value: V): boolean;
}): ExactCache<K, V> {
  const { probe } = o;
  const entries = new Map<K, { value: V; version: number }>();
  const version = (): number | null => (probe ? probe.version() : null);
  const get = (key: K, at: number | null): V | undefined => {
    if (at === null) return undefined;
    const hit = entries.get(key);
    return hit !== undefined && hit.version === at ? hit.value : undefined;
  };
  return {
    version,
    get,
    // The reading is taken before the read, so a write racing with it leaves the entry already stale.
    async load(key, at = version()) {
      const hit = get(key, at);
      if (hit !== undefined) return hit;
      const value = await o.load(key);
      if (at !== null) {
        entries.delete(key);
        if (o.keep?.(value) ?? true) {
          if (entries.size >= o.max) entries.delete(entries.keys().next().value!);
          entries.set(key, { value, version: at });
        }
      }
      return value;
    },
    get size() {
      return entries.size;
    },
  };
}
