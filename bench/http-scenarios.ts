// The HTTP scenarios: the real app (SQLite, PostgreSQL, Redis limiter) and a bare Fastify, each measured in turn.
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Fastify from 'fastify';
import { createRuntime } from '../src/runtime.js';
import { loadConfig } from '../src/config.js';
import { openDb, type Db } from '../src/db/db.js';
import { systemClock } from '../src/lib/clock.js';
import { createKey, setRateLimit } from '../src/keys/keys.repo.js';
import { createMemoryLimiter, type RateLimiter } from '../src/ratelimit/ratelimit.js';
import { createRedisLimiter } from '../src/ratelimit/redis-store.js';
import { freshPostgres, postgresForTests, redisForTests, redisTestPrefix } from '../src/testing/services.js';
import { createHook } from '../src/webhooks/hooks.repo.js';
import { createWorkspace } from '../src/workspaces/workspaces.repo.js';
import { measure, median, pairedCreate, pairedRounds, results, skip } from './http-rounds.js';
import { fmt } from './report.js';
import {
  BENCH_RATE_LIMIT,
  CREATE_ROUNDS,
  CREATE_S,
  HOOKS,
  HOST,
  PAIRED_ROUNDS,
  PAIRED_S,
  QUICK,
  QUICK_PG,
} from './settings.js';

type Running = { base: string; token: string; hooksBody: unknown; close(): Promise<void> };

/** The real app (buildApp, logger off) on 127.0.0.1 with one business-tier key whose rate limit is raised. */
async function startSignet(db: Db, limiter: RateLimiter, label: string, tmp: string): Promise<Running> {
  const now = systemClock.now();
  const ws = await createWorkspace(db.kysely, { name: `Bench ${label}`, tier: 'business' }, now);
  const { key, plaintext } = await createKey(db.kysely, { workspaceId: ws.id, legacy: false }, now);
  await setRateLimit(db.kysely, key.id, BENCH_RATE_LIMIT);
  for (let i = 0; i < HOOKS; i++) {
    await createHook(
      db.kysely,
      {
        workspaceId: ws.id,
        targetUrl: `https://hooks.example.com/signet/${i}`,
        events: i === 0 ? [] : ['document.completed', 'signing_request.signed'],
        source: 'api',
      },
      now + i,
    );
  }
  // The monthly document cap raised like the rate limit: the create rounds make thousands of documents.
  const config = loadConfig({
    DATA_DIR: tmp,
    SIGNET_ALLOW_PRIVATE_NETWORK: '1',
    LOG_LEVEL: 'silent',
    SIGNET_TIER_CAPS: `business=${BENCH_RATE_LIMIT}`,
  });
  const rt = await createRuntime(config, { api: true, worker: false, db, limiter, clock: systemClock, logger: false });
  const app = rt.app!;
  await app.listen({ port: 0, host: HOST });
  const base = `http://${HOST}:${(app.server.address() as AddressInfo).port}`;

  // Sanity: the benchmarked responses are the real, successful ones, with the raised limit in force.
  const auth = { authorization: `Bearer ${plaintext}` };
  const hooks = await fetch(`${base}/v1/hooks`, { headers: auth });
  const hooksBody = (await hooks.json()) as unknown[];
  if (
    hooks.status !== 200 ||
    hooksBody.length !== HOOKS ||
    hooks.headers.get('ratelimit-limit') !== String(BENCH_RATE_LIMIT)
  ) {
    throw new Error(
      `sanity check failed: GET /v1/hooks → ${hooks.status}, ${hooksBody.length} hooks, limit ${hooks.headers.get('ratelimit-limit')}`,
    );
  }
  const me = await fetch(`${base}/v1/me`, { headers: auth });
  await me.arrayBuffer();
  if (me.status !== 200) throw new Error(`sanity check failed: GET /v1/me → ${me.status}`);

  return {
    base,
    token: plaintext,
    hooksBody,
    async close() {
      await rt.close();
    },
  };
}

/** A bare Fastify (same version, logger off, same host) answering the same JSON with no hooks, auth or db. */
async function startBare(body: unknown): Promise<{ base: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.get('/v1/hooks', async () => body);
  await app.listen({ port: 0, host: HOST });
  return { base: `http://${HOST}:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP scenarios

export async function httpOnSqlite(tmp: string): Promise<unknown> {
  const db = await openDb(`sqlite:${path.join(tmp, 'http.db')}`);
  const s = await startSignet(db, createMemoryLimiter({ clock: systemClock }), 'sqlite', tmp);
  const auth = { authorization: `Bearer ${s.token}` };
  const bare = await startBare(s.hooksBody);
  try {
    await measure('sqlite  GET /v1/hooks (memory limiter)', `${s.base}/v1/hooks`, auth);
    await measure('sqlite  GET /v1/me', `${s.base}/v1/me`, auth);
    await measure('bare    GET /v1/hooks (same JSON)', `${bare.base}/v1/hooks`);
    process.stdout.write(
      `  paired rounds: sqlite GET /v1/hooks and bare, ${PAIRED_ROUNDS} × ${PAIRED_S} s each, interleaved … `,
    );
    results.paired = await pairedRounds({ url: `${s.base}/v1/hooks`, headers: auth }, { url: `${bare.base}/v1/hooks` });
    console.log(`median ${fmt(100 * median(results.paired.rpsRatios), 1)}% of bare by req/s`);
  } finally {
    await s.close();
    await bare.close();
  }

  const redis = QUICK ? { skip: 'BENCH_QUICK' } : await redisForTests().catch((e: Error) => ({ skip: e.message }));
  if ('skip' in redis) {
    skip('sqlite  GET /v1/hooks (redis limiter)', redis.skip);
  } else {
    const limiter = createRedisLimiter({ url: redis.url, clock: systemClock, prefix: redisTestPrefix() });
    const r = await startSignet(db, limiter, 'redis', tmp);
    try {
      // The limiter silently degrades to per-instance counting if Redis fails; say so rather than mislabel the row.
      const row = await measure('sqlite  GET /v1/hooks (redis limiter)', `${r.base}/v1/hooks`, {
        authorization: `Bearer ${r.token}`,
      });
      if (row && limiter.mode !== 'redis')
        results.notes.push(`redis limiter ended in mode "${limiter.mode}", not "redis"`);
    } finally {
      await r.close();
    }
  }
  await db.close();
  return s.hooksBody;
}

export async function httpOnPostgres(tmp: string): Promise<void> {
  const names = ['pg      GET /v1/hooks (memory limiter)', 'pg      GET /v1/me'];
  const check =
    QUICK && !QUICK_PG ? { skip: 'BENCH_QUICK' } : await postgresForTests().catch((e: Error) => ({ skip: e.message }));
  if ('skip' in check) {
    for (const n of names) skip(n, check.skip);
    return;
  }
  const pg = await freshPostgres(check.url);
  try {
    const s = await startSignet(pg.db, createMemoryLimiter({ clock: systemClock }), 'pg', tmp);
    const auth = { authorization: `Bearer ${s.token}` };
    const bare = await startBare(s.hooksBody);
    try {
      await measure(names[0]!, `${s.base}/v1/hooks`, auth);
      await measure(names[1]!, `${s.base}/v1/me`, auth);
      const paired = async (p: string) => {
        process.stdout.write(
          `  paired rounds: pg GET ${p} and bare, ${PAIRED_ROUNDS} × ${PAIRED_S} s each, interleaved … `,
        );
        const r = await pairedRounds({ url: `${s.base}${p}`, headers: auth }, { url: `${bare.base}/v1/hooks` });
        console.log(`median ${fmt(100 * median(r.rpsRatios), 1)}% of bare by req/s`);
        return r;
      };
      results.pgPaired = { hooks: await paired('/v1/hooks'), me: await paired('/v1/me') };
    } finally {
      await s.close();
      await bare.close();
    }
  } finally {
    await pg.drop();
  }
}

/**
 * Creating signing requests (issue 25): a one-page PDF with `auto_append`, CREATE_CLIENTS clients, on a SQLite and
 * a PostgreSQL server side by side, rounds alternating. API only: no seal, mail or delivery job runs.
 */
export async function createOnBoth(tmp: string): Promise<void> {
  const name = 'sqlite and pg POST /v1/signing-requests (one-page PDF)';
  const check = QUICK ? { skip: 'BENCH_QUICK' } : await postgresForTests().catch((e: Error) => ({ skip: e.message }));
  if ('skip' in check) return skip(name, check.skip);
  const sqliteDb = await openDb(`sqlite:${path.join(tmp, 'create.db')}`);
  const pg = await freshPostgres(check.url);
  try {
    const a = await startSignet(sqliteDb, createMemoryLimiter({ clock: systemClock }), 'create sqlite', tmp);
    const b = await startSignet(pg.db, createMemoryLimiter({ clock: systemClock }), 'create pg', tmp);
    try {
      process.stdout.write(`  ${name}: ${CREATE_ROUNDS} × ${CREATE_S} s each database, interleaved … `);
      const at = (x: { base: string; token: string }) => ({
        url: x.base,
        headers: { authorization: `Bearer ${x.token}` },
      });
      results.create = await pairedCreate(at(a), at(b));
      const rps = (xs: { rps: number }[]) => median(xs.map((x) => x.rps));
      console.log(`sqlite ${fmt(rps(results.create.sqlite), 1)}/s, pg ${fmt(rps(results.create.pg), 1)}/s (medians)`);
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    await sqliteDb.close();
    await pg.drop();
  }
}
