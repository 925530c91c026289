// Test access to the real PostgreSQL and Redis. Locally an unreachable service skips its suites with the reason;
// under CI=true it is required and the suite fails instead.
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest, type MigrationName } from '../db/migrate.js';

const PG_DEFAULT = 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_DEFAULT = 'redis://127.0.0.1:6379';

/** A TCP connect, retried: on a loaded 2-core machine a single short attempt can miss a healthy server. */
async function reachable(url: string): Promise<boolean> {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (await connectOnce(url)) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

function connectOnce(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) || (u.protocol.startsWith('redis') ? 6379 : 5432) });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(3000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

export type ServiceCheck = { url: string } | { skip: string };

async function check(name: string, envVar: string, fallback: string): Promise<ServiceCheck> {
  const url = process.env[envVar] || fallback;
  if (await reachable(url)) return { url };
  const reason = `${name} not reachable at ${url} (set ${envVar})`;
  if (process.env.CI === 'true') throw new Error(`CI requires ${reason}`);
  return { skip: reason };
}

/** Admin URL of a PostgreSQL server for tests, or a skip reason. */
export const postgresForTests = () => check('PostgreSQL', 'DATABASE_URL_TEST', PG_DEFAULT);
/**
 * The two databases a suite runs on, for `for (const d of await bothDatabases()) describe(…, { skip: d.skip }, …)`:
 * SQLite always, PostgreSQL when reachable (skipped with the reason otherwise; required under CI).
 */
export async function bothDatabases() {
  const pg = await postgresForTests();
  return [
    { name: 'SQLite', database: 'sqlite' as const, skip: false as const },
    {
      name: 'PostgreSQL',
      database: 'url' in pg ? { postgresAdminUrl: pg.url } : ('sqlite' as const),
      skip: 'skip' in pg ? pg.skip : (false as const),
    },
  ];
}

/** URL of a Redis server for tests, or a skip reason. */
export const redisForTests = () => check('Redis', 'REDIS_URL_TEST', REDIS_DEFAULT);

/**
 * A new database of its own, migrated (up to `upTo` when a test needs an older schema); `drop()` closes and removes
 * it. Under `npm test` (scripts/test.sh names a template for the run in SIGNET_TEST_PG_TEMPLATE) a fully migrated
 * database is a copy of that run's template, migrated once by whichever test process needs it first: the 23
 * migrations cost about a second per database, a copy a fraction of it. Test databases commit without waiting for
 * the WAL flush: nothing here outlives the test.
 */
export async function freshPostgres(
  adminUrl: string,
  upTo?: MigrationName,
  /** A kept database (keepPostgres) to copy instead, file by file: a seeded history (seed/cache.ts). */
  from?: string,
): Promise<{ db: Db; url: string; drop(): Promise<void> }> {
  const name = `signet_t_${randomBytes(6).toString('hex')}`;
  const named = process.env.SIGNET_TEST_PG_TEMPLATE;
  const template = !upTo && !from && named && /^signet_tpl_\d+_\w+$/.test(named) ? named : undefined;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    if (from) await admin.query(`CREATE DATABASE ${name} TEMPLATE ${from} STRATEGY FILE_COPY`);
    else if (template) await copyOfTemplate(admin, adminUrl, template, name);
    else await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  } finally {
    await admin.end();
  }
  const url = urlOf(adminUrl, name);
  const db = await openDb(url, { migrate: false });
  if (!template && !from) await migrateToLatest(db, upTo);
  return {
    db,
    url,
    async drop() {
      await db.close();
      await dropDatabase(adminUrl, name);
    },
  };
}

const urlOf = (adminUrl: string, name: string) => {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
};

/** Creates `name` as a copy of `template`, making the template first (under an advisory lock) if it is not there. */
async function copyOfTemplate(admin: pg.Client, adminUrl: string, template: string, name: string) {
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      // 3D000: no template yet; 55006: someone is still connected to it (its maker closing).
      if (attempt >= 50 || (code !== '3D000' && code !== '55006')) throw err;
      if (code === '3D000') await makeTemplate(admin, adminUrl, template);
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function makeTemplate(admin: pg.Client, adminUrl: string, template: string) {
  await admin.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
  try {
    const r = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (r.rowCount) return;
    const building = `${template}_building`;
    await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${building}`);
    const db = await openDb(urlOf(adminUrl, building), { migrate: false });
    try {
      await migrateToLatest(db);
    } finally {
      await db.close();
    }
    await waitForNoConnections(admin, building);
    // Renamed only once complete, so a copy is never taken of a half-migrated template.
    await admin.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
  } finally {
    await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [template]);
  }
}

// The pool reports closed before its backends have gone; a forced drop would then kill live connections and surface
// as an uncaught "terminating connection" error in the test process.
async function waitForNoConnections(c: pg.Client, name: string) {
  for (let i = 0; i < 100; i++) {
    const r = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    if (r.rows[0].n === 0) return;
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Drops a test database once its connections have gone. */
async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const c = new pg.Client(adminUrl);
  await c.connect();
  try {
    await waitForNoConnections(c, name);
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

/**
 * Keeps the database at `url` (its pool closed) under `name`, for later copies (freshPostgres's `from`); false if
 * another process kept one under that name first (this one is dropped).
 */
export async function keepPostgres(adminUrl: string, url: string, name: string): Promise<boolean> {
  const from = new URL(url).pathname.slice(1);
  const c = new pg.Client(adminUrl);
  await c.connect();
  try {
    await waitForNoConnections(c, from);
    await c.query(`ALTER DATABASE ${from} RENAME TO ${name}`);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err; // duplicate_database
    await c.query(`DROP DATABASE IF EXISTS ${from} WITH (FORCE)`);
    return false;
  } finally {
    await c.end();
  }
}

/** The names of the databases matching the LIKE pattern `like` (kept histories: seed/cache.ts). */
export async function keptPostgres(adminUrl: string, like: string) {
  const c = new pg.Client(adminUrl);
  await c.connect();
  try {
    const r = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [like]);
    return r.rows.map((x) => x.datname);
  } finally {
    await c.end();
  }
}

export const dropPostgres = dropDatabase;

/** A unique key prefix so concurrent test runs never share Redis keys. */
export const redisTestPrefix = () => `signet:test:${randomBytes(6).toString('hex')}:`;
