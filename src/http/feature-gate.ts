// A feature whose tables may not exist yet (a server started with SIGNET_AUTO_MIGRATE=0 during a rolling upgrade,
// before `signet migrate` ran) answers its catalogued 503 with Retry-After on its own routes, and every other route
// keeps serving. Once available it stays available; until then each request checks again (one small query, only
// on a not-yet-migrated deployment), so the feature comes up without a restart as soon as the migration has run.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/db.js';
import { migrationApplied } from '../db/migrate.js';
import { apiError, type ErrorName } from '../lib/errors.js';

export type FeatureGate = { available(): Promise<boolean> };

export function createFeatureGate(check: () => Promise<boolean>): FeatureGate {
  let known = false;
  return {
    async available() {
      if (!known) known = await check();
      return known;
    },
  };
}

const migrationGates = new WeakMap<Db, Map<string, FeatureGate>>();

/** The one gate per database and migration, for code that checks it outside a gated plugin (jobs, services). */
export function migrationGate(db: Db, migration: Parameters<typeof migrationApplied>[1]): FeatureGate {
  let byName = migrationGates.get(db);
  if (!byName) migrationGates.set(db, (byName = new Map()));
  let gate = byName.get(migration);
  if (!gate) byName.set(migration, (gate = createFeatureGate(() => migrationApplied(db, migration))));
  return gate;
}

/** Every route of this (encapsulated) plugin answers `error` with Retry-After while the feature is unavailable. */
export function registerFeatureGate(
  app: FastifyInstance,
  gate: FeatureGate,
  error: ErrorName,
  o: { message?: string; retryAfterSeconds?: number } = {},
): void {
  const headers = { 'Retry-After': String(o.retryAfterSeconds ?? 30) };
  app.addHook('onRequest', async () => {
    if (!(await gate.available())) throw apiError(error, { message: o.message, headers });
  });
}
