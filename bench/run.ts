// `npm run bench`: HTTP throughput of the real app (SQLite, PostgreSQL, Redis limiter) against a bare Fastify
// route, and webhook dispatch throughput. Prints a table to stdout and writes nothing else; figures are copied
// into BENCHMARKS.md by hand.
//
// Servers run in this process; autocannon runs in a forked child (bench/load.ts) so load generation has its own
// event loop instead of sharing the server's. On a 2-core machine the two processes still share the CPUs.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { createRuntime } from '../src/runtime.js';
import { loadConfig } from '../src/config.js';
import { openDb, type Db } from '../src/db/db.js';
import { systemClock } from '../src/lib/clock.js';
import { createKey, setRateLimit } from '../src/keys/keys.repo.js';
import { createMemoryLimiter, type RateLimiter } from '../src/ratelimit/ratelimit.js';
import { createRedisLimiter } from '../src/ratelimit/redis-store.js';
import { freshPostgres, postgresForTests, redisForTests, redisTestPrefix } from '../src/testing/services.js';
import { createDispatcher } from '../src/webhooks/dispatcher.js';
import { createHook } from '../src/webhooks/hooks.repo.js';
import { EVENT_EXAMPLES } from '../src/webhooks/events.schemas.js';
import { createEmitter } from '../src/webhooks/outbox.repo.js';
import { createWorkspace } from '../src/workspaces/workspaces.repo.js';
import type { LoadJob, LoadReport } from './load.js';

const CONNECTIONS = 50;
const DURATION_S = 8;
const WARMUP_S = 2;
/** Per-key limit set on the benchmark key so the 60/min default never caps throughput (noted in the output). */
const BENCH_RATE_LIMIT = 1_000_000_000;
/** Hooks in the benchmark workspace: GET /v1/hooks returns this many. */
const HOOKS = 3;
const DISPATCH_EVENTS = 5_000;
const EMIT_BATCH = 500;
const DISPATCH_DEADLINE_MS = 60_000;
const HTTP_TARGET_RATIO = 0.75;
/** Issue 12: authenticated GET /v1/hooks on PostgreSQL, by req/s against bare in the same run. */
const PG_TARGET_RATIO = 0.35;
/** The target is judged on interleaved rounds (app, bare, bare, app, …) so drifting load on the host hits both. */
const PAIRED_ROUNDS = 6;
const PAIRED_S = 3;
const DISPATCH_TARGET = 500;

/**
 * `BENCH_QUICK=1`: only SQLite /v1/hooks, /v1/me and bare; `BENCH_QUICK=pg`: those and the PostgreSQL rows (for
 * iterating on a hot path; not for BENCHMARKS.md).
 */
const QUICK_PG = process.env.BENCH_QUICK === 'pg';
const QUICK = process.env.BENCH_QUICK === '1' || QUICK_PG;

const HOST = '127.0.0.1';
const here = path.dirname(fileURLToPath(import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-bench-'));

// ---------------------------------------------------------------------------------------------------------------
// Load generator (child process)

// With two or more cores the servers (this process) and the load generator each get a core of their own, so they do
// not take turns on one; without taskset, or on one core, the scheduler decides as before.
const SERVER_CPU = 0;
const LOAD_CPU = 1;
let pinned = false;
function pin(pid: number, cpu: number): void {
  if (os.cpus().length < 2) return;
  try {
    execFileSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
    pinned = true;
  } catch {
    // taskset missing or not permitted: unpinned.
  }
}

let child: ChildProcess | undefined;
let jobSeq = 0;
const pending = new Map<number, (r: LoadReport) => void>();

function loadGenerator(): ChildProcess {
  if (child) return child;
  child = fork(path.join(here, 'load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  pin(child.pid!, LOAD_CPU);
  child.on('message', (r: LoadReport) => {
    pending.get(r.id)?.(r);
    pending.delete(r.id);
  });
  child.on('exit', (code) => {
    for (const [id, resolve] of pending) resolve({ id, error: `load generator exited (${code})` } as LoadReport);
    pending.clear();
  });
  return child;
}

function load(
  url: string,
  headers: Record<string, string>,
  duration = DURATION_S,
  warmup = WARMUP_S,
): Promise<LoadReport> {
  const job: LoadJob = {
    id: ++jobSeq,
    opts: {
      url,
      headers,
      connections: CONNECTIONS,
      duration,
      warmup: { connections: CONNECTIONS, duration: warmup },
    },
  };
  return new Promise((resolve) => {
    pending.set(job.id, resolve);
    loadGenerator().send(job);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Results

/** Server-side cost, measured in this (server) process while the child generates load: CPU time per request
 *  (user+system, all threads, warm-up included) and event-loop utilisation (1.0 = the server was saturated). */
type ServerCost = { cpuUsPerReq: number; elu: number };
type Row = { name: string; r?: LoadReport; cost?: ServerCost; skipped?: string };
const rows: Row[] = [];
const notes: string[] = [];
let failures = 0;

async function measure(
  name: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<LoadReport | undefined> {
  process.stdout.write(`  ${name} … `);
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const r = await load(url, headers);
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0).utilization;
  if (r.error) {
    console.log(`error: ${r.error}`);
    rows.push({ name, skipped: `error: ${r.error}` });
    failures++;
    return undefined;
  }
  const bad = r.non2xx + r.errors + r.warmupNon2xx + r.warmupErrors;
  console.log(
    `${Math.round(r.rps)} req/s, p99 ${r.p99} ms, non-2xx ${r.non2xx} (warm-up ${r.warmupNon2xx}), errors ${r.errors}`,
  );
  if (bad > 0) {
    failures++;
    notes.push(
      `${name}: ${r.non2xx} non-2xx, ${r.errors} errors (warm-up: ${r.warmupNon2xx} / ${r.warmupErrors}); codes ${JSON.stringify(r.statusCodes)}`,
    );
  }
  rows.push({ name, r, cost: { cpuUsPerReq: (cpu.user + cpu.system) / Math.max(1, r.total + r.warmupTotal), elu } });
  return r;
}

/** One short round: req/s and server CPU µs per request. */
async function round(url: string, headers: Record<string, string>): Promise<{ rps: number; cpuUs: number }> {
  const cpu0 = process.cpuUsage();
  const r = await load(url, headers, PAIRED_S, 0.5);
  const cpu = process.cpuUsage(cpu0);
  if (r.error || r.non2xx + r.errors > 0)
    throw new Error(`paired round against ${url} failed: ${r.error ?? JSON.stringify(r.statusCodes)}`);
  return { rps: r.rps, cpuUs: (cpu.user + cpu.system) / Math.max(1, r.total + r.warmupTotal) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

type Paired = { rpsRatios: number[]; cpuRatios: number[] };
let paired: Paired | undefined;

/** Rounds of the app and bare back to back, in alternating order; ratios per round, judged on their medians. */
async function pairedRounds(
  app: { url: string; headers: Record<string, string> },
  bare: { url: string },
): Promise<Paired> {
  const out: Paired = { rpsRatios: [], cpuRatios: [] };
  for (let i = 0; i < PAIRED_ROUNDS; i++) {
    const a = i % 2 === 0 ? await round(app.url, app.headers) : undefined;
    const b = await round(bare.url, {});
    const a2 = a ?? (await round(app.url, app.headers));
    out.rpsRatios.push(a2.rps / b.rps);
    out.cpuRatios.push(b.cpuUs / a2.cpuUs);
  }
  return out;
}

function skip(name: string, reason: string): void {
  console.log(`  ${name} … skipped: ${reason}`);
  rows.push({ name, skipped: reason });
}

// ---------------------------------------------------------------------------------------------------------------
// Servers

type Running = { base: string; token: string; hooksBody: unknown; close(): Promise<void> };

/** The real app (buildApp, logger off) on 127.0.0.1 with one business-tier key whose rate limit is raised. */
async function startSignet(db: Db, limiter: RateLimiter, label: string): Promise<Running> {
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
  const config = loadConfig({ DATA_DIR: tmp, SIGNET_ALLOW_PRIVATE_NETWORK: '1', LOG_LEVEL: 'silent' });
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

async function httpOnSqlite(): Promise<unknown> {
  const db = await openDb(`sqlite:${path.join(tmp, 'http.db')}`);
  const s = await startSignet(db, createMemoryLimiter({ clock: systemClock }), 'sqlite');
  const auth = { authorization: `Bearer ${s.token}` };
  const bare = await startBare(s.hooksBody);
  try {
    await measure('sqlite  GET /v1/hooks (memory limiter)', `${s.base}/v1/hooks`, auth);
    await measure('sqlite  GET /v1/me', `${s.base}/v1/me`, auth);
    await measure('bare    GET /v1/hooks (same JSON)', `${bare.base}/v1/hooks`);
    process.stdout.write(
      `  paired rounds: sqlite GET /v1/hooks and bare, ${PAIRED_ROUNDS} × ${PAIRED_S} s each, interleaved … `,
    );
    paired = await pairedRounds({ url: `${s.base}/v1/hooks`, headers: auth }, { url: `${bare.base}/v1/hooks` });
    console.log(`median ${fmt(100 * median(paired.rpsRatios), 1)}% of bare by req/s`);
  } finally {
    await s.close();
    await bare.close();
  }

  const redis = QUICK ? { skip: 'BENCH_QUICK' } : await redisForTests().catch((e: Error) => ({ skip: e.message }));
  if ('skip' in redis) {
    skip('sqlite  GET /v1/hooks (redis limiter)', redis.skip);
  } else {
    const limiter = createRedisLimiter({ url: redis.url, clock: systemClock, prefix: redisTestPrefix() });
    const r = await startSignet(db, limiter, 'redis');
    try {
      // The limiter silently degrades to per-instance counting if Redis fails; say so rather than mislabel the row.
      const row = await measure('sqlite  GET /v1/hooks (redis limiter)', `${r.base}/v1/hooks`, {
        authorization: `Bearer ${r.token}`,
      });
      if (row && limiter.mode !== 'redis') notes.push(`redis limiter ended in mode "${limiter.mode}", not "redis"`);
    } finally {
      await r.close();
    }
  }
  await db.close();
  return s.hooksBody;
}

async function httpOnPostgres(): Promise<void> {
  const names = ['pg      GET /v1/hooks (memory limiter)', 'pg      GET /v1/me'];
  const check =
    QUICK && !QUICK_PG ? { skip: 'BENCH_QUICK' } : await postgresForTests().catch((e: Error) => ({ skip: e.message }));
  if ('skip' in check) {
    for (const n of names) skip(n, check.skip);
    return;
  }
  const pg = await freshPostgres(check.url);
  try {
    const s = await startSignet(pg.db, createMemoryLimiter({ clock: systemClock }), 'pg');
    const auth = { authorization: `Bearer ${s.token}` };
    try {
      await measure(names[0]!, `${s.base}/v1/hooks`, auth);
      await measure(names[1]!, `${s.base}/v1/me`, auth);
    } finally {
      await s.close();
    }
  } finally {
    await pg.drop();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Webhook dispatch

type DispatchResult = {
  emitMs: number;
  ms: number;
  delivered: number;
  received: number;
  passes: number;
  attempts: number;
  statuses: Record<string, number>;
};

async function dispatch(): Promise<DispatchResult> {
  let received = 0;
  const receiver = http.createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, HOST, r));
  const target = `http://${HOST}:${(receiver.address() as AddressInfo).port}/hook`;

  const db = await openDb(`sqlite:${path.join(tmp, 'dispatch.db')}`);
  const now = systemClock.now();
  const ws = await createWorkspace(db.kysely, { name: 'Bench dispatch', tier: 'business' }, now);
  await createHook(db.kysely, { workspaceId: ws.id, targetUrl: target, events: [], source: 'api' }, now);

  const emit = createEmitter(systemClock);
  const e0 = performance.now();
  for (let from = 0; from < DISPATCH_EVENTS; from += EMIT_BATCH) {
    await db.kysely.transaction().execute(async (trx) => {
      for (let i = from; i < Math.min(from + EMIT_BATCH, DISPATCH_EVENTS); i++) {
        await emit(trx, 'signing_request.signed', ws.id, {
          ...EVENT_EXAMPLES['signing_request.signed'],
          document_id: `doc_bench_${i}`,
          signing_request_id: `req_bench_${i}`,
        });
      }
    });
  }
  const emitMs = performance.now() - e0;

  const countStatuses = async () => {
    const rs = await db.kysely
      .selectFrom('deliveries')
      .select(['status', db.kysely.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rs.map((r) => [r.status, Number(r.n)]));
  };

  // The guarded agent the service uses in production, with private addresses allowed for the loopback receiver.
  const dispatcher = createDispatcher({
    db,
    clock: systemClock,
    workerId: `bench:${process.pid}`,
    allowPrivateNetwork: true,
  });
  let passes = 0;
  let attempts = 0;
  let statuses: Record<string, number>;
  const t0 = performance.now();
  try {
    for (;;) {
      attempts += await dispatcher.runOnce();
      passes++;
      statuses = await countStatuses();
      if ((statuses.succeeded ?? 0) >= DISPATCH_EVENTS) break;
      if (performance.now() - t0 > DISPATCH_DEADLINE_MS) {
        notes.push(`dispatch: deadline of ${DISPATCH_DEADLINE_MS / 1000} s reached before all deliveries succeeded`);
        failures++;
        break;
      }
    }
  } finally {
    await dispatcher.stop();
  }
  const ms = performance.now() - t0;
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
  await db.close();
  return { emitMs, ms, delivered: statuses.succeeded ?? 0, received, passes, attempts, statuses };
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

function table(head: string[], body: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}

const loadavg = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');
let loadAtStart = '';

async function main(): Promise<void> {
  const started = performance.now();
  pin(process.pid, SERVER_CPU);
  loadAtStart = loadavg();
  console.log(
    `Signet bench — node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? '?'})`,
  );
  console.log(
    `autocannon: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s measured per scenario, in a child process; servers in this process.`,
  );
  console.log(`Load average at start (other work on the host skews results): ${loadAtStart}`);
  console.log(
    pinned
      ? `Servers pinned to CPU ${SERVER_CPU}, load generator to CPU ${LOAD_CPU} (taskset).`
      : 'Not pinned to CPUs.',
  );
  console.log(
    `The benchmark key's per-key rate limit is raised to ${fmt(BENCH_RATE_LIMIT)}/min (setRateLimit) so 60/min does not cap it.\n`,
  );

  await httpOnSqlite();
  await httpOnPostgres();

  let d: DispatchResult | undefined;
  let perSec = NaN;
  if (!QUICK) {
    process.stdout.write(`  dispatch ${fmt(DISPATCH_EVENTS)} events → loopback receiver … `);
    d = await dispatch();
    perSec = d.delivered / (d.ms / 1000);
    console.log(`${fmt(perSec)} deliveries/s`);
  }

  child?.disconnect();

  const byName = (n: string) => rows.find((r) => r.name.startsWith(n));
  const bare = byName('bare');
  const pct = (x: number) => (Number.isFinite(x) ? `${fmt(100 * x, 0)}%` : '');
  const rpsRatio = (r?: LoadReport) => (r && bare?.r ? r.rps / bare.r.rps : NaN);
  const cpuRatio = (c?: ServerCost) => (c && bare?.cost ? bare.cost.cpuUsPerReq / c.cpuUsPerReq : NaN);
  console.log('\nHTTP — req/s: mean of per-second samples; latency ms; vs bare: req/s ÷ bare req/s;');
  console.log(
    '       srv CPU: server-process CPU µs per request; CPU vs bare: bare µs/req ÷ this µs/req (capacity on equal CPU)\n',
  );
  console.log(
    table(
      [
        'scenario',
        'req/s',
        'p50',
        'p90',
        'p99',
        'max',
        'requests',
        'non-2xx',
        'errors',
        'vs bare',
        'srv CPU µs/req',
        'srv ELU',
        'CPU vs bare',
      ],
      rows.map(({ name, r, cost, skipped }) =>
        r && cost
          ? [
              name,
              fmt(r.rps),
              String(r.p50),
              String(r.p90),
              String(r.p99),
              String(r.maxLatency),
              fmt(r.total),
              String(r.non2xx),
              String(r.errors),
              pct(rpsRatio(r)),
              fmt(cost.cpuUsPerReq),
              fmt(cost.elu, 2),
              pct(cpuRatio(cost)),
            ]
          : [name, `skipped: ${skipped}`, '', '', '', '', '', '', '', '', '', '', ''],
      ),
    ),
  );

  if (d) {
    console.log('\nWebhook dispatch (SQLite, one hook, loopback receiver answering 200 with keep-alive)\n');
    console.log(
      table(
        ['events', 'emit ms', 'dispatch ms', 'deliveries/s', 'succeeded', 'received', 'runOnce passes', 'statuses'],
        [
          [
            fmt(DISPATCH_EVENTS),
            fmt(d.emitMs),
            fmt(d.ms),
            fmt(perSec),
            fmt(d.delivered),
            fmt(d.received),
            String(d.passes),
            JSON.stringify(d.statuses),
          ],
        ],
      ),
    );
  }

  const all = (xs: number[]) => xs.map((x) => fmt(100 * x, 0)).join(' ');
  if (paired) {
    console.log(`\nPaired rounds (sqlite GET /v1/hooks ÷ bare, ${PAIRED_ROUNDS} rounds of ${PAIRED_S} s, interleaved)`);
    console.log(`  by req/s: median ${fmt(100 * median(paired.rpsRatios), 1)}% (rounds: ${all(paired.rpsRatios)})`);
    console.log(
      `  by server CPU per request: median ${fmt(100 * median(paired.cpuRatios), 1)}% (rounds: ${all(paired.cpuRatios)})`,
    );
  }
  const httpRatio = paired ? median(paired.rpsRatios) : NaN;
  console.log('\nTargets');
  console.log(
    `  authenticated GET /v1/hooks on SQLite ≥ ${HTTP_TARGET_RATIO * 100}% of bare (paired median): ${fmt(100 * httpRatio, 1)}% by req/s → ${httpRatio >= HTTP_TARGET_RATIO ? 'MET' : 'MISSED'}` +
      ` (${paired ? fmt(100 * median(paired.cpuRatios), 1) : '?'}% by server CPU per request)`,
  );
  const pgRow = byName('pg      GET /v1/hooks');
  if (pgRow?.r) {
    const r = rpsRatio(pgRow.r);
    console.log(
      `  authenticated GET /v1/hooks on PostgreSQL ≥ ${PG_TARGET_RATIO * 100}% of bare: ${fmt(100 * r, 1)}% by req/s → ${r >= PG_TARGET_RATIO ? 'MET' : 'MISSED'} (${fmt(100 * cpuRatio(pgRow.cost), 1)}% by server CPU per request)`,
    );
  }
  if (d)
    console.log(
      `  webhook dispatch ≥ ${DISPATCH_TARGET}/s: ${fmt(perSec)}/s → ${perSec >= DISPATCH_TARGET ? 'MET' : 'MISSED'}`,
    );
  const totalNon2xx = rows.reduce((n, r) => n + (r.r ? r.r.non2xx + r.r.warmupNon2xx : 0), 0);
  console.log(`  non-2xx responses across all HTTP scenarios (incl. warm-up): ${totalNon2xx}`);
  for (const n of notes) console.log(`  NOTE ${n}`);
  console.log(`  load average (1/5/15 min) at start ${loadAtStart}, at end ${loadavg()}`);
  console.log(`\nTotal bench time ${fmt((performance.now() - started) / 1000, 1)} s`);
}

try {
  await main();
} catch (err) {
  failures++;
  console.error(err);
  child?.kill();
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
  if (failures > 0) process.exitCode = 1;
  // Everything is closed above; if a handle still holds the process, say which rather than hang silently.
  setTimeout(() => {
    console.error('bench: still running 10 s after finishing; open resources:', process.getActiveResourcesInfo());
    process.exit(1);
  }, 10_000).unref();
}
