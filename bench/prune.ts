// Pruning under load (issue 25): the real app (harness: real port, SQLite, the worker's prune jobs in the same
// process, as `signet serve` runs them) with millions of expired key uses and event chains, GET /v1/me at a fixed
// request rate from a forked autocannon (loopback only, bounded), its p50/p99 measured before and during the prune.
// BENCH_PRUNE_KEY_USES (default 2,000,000) and BENCH_PRUNE_EVENTS (default 300,000 events, each with a settled
// delivery and two attempts) size the fill; BENCH_PRUNE_RATE (default 400 req/s) the load; PRUNE_BATCH_ROWS the
// batches. Not a test: it prints figures for BENCHMARKS.md.
import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import { setRateLimit } from '../src/keys/keys.repo.js';
import { startHarness } from '../src/testing/harness.js';
import type { LoadJob, LoadReport } from './load.js';

const KEY_USES = Number(process.env.BENCH_PRUNE_KEY_USES ?? 2_000_000);
const EVENTS = Number(process.env.BENCH_PRUNE_EVENTS ?? 300_000);
const RATE = Number(process.env.BENCH_PRUNE_RATE ?? 400);
const ROUND_S = 5;
const CHUNK = 250_000; // rows per INSERT … SELECT (one transaction each)
const DAY = 86_400_000;

const here = path.dirname(fileURLToPath(import.meta.url));
const child = fork(path.join(here, 'load.ts'), [], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
let seq = 0;
/** One fixed-rate round against `url` (10 connections, RATE req/s overall). */
function round(url: string, headers: Record<string, string>, seconds = ROUND_S): Promise<LoadReport> {
  const job: LoadJob = { id: ++seq, opts: { url, headers, connections: 10, overallRate: RATE, duration: seconds } };
  return new Promise((resolve) => {
    const on = (r: LoadReport) => {
      if (r.id !== job.id) return;
      child.off('message', on);
      resolve(r);
    };
    child.on('message', on);
    child.send(job);
  });
}

const fmt = (r: LoadReport) =>
  `${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.maxLatency} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;

async function main() {
  const h = await startHarness({
    start: Date.now(),
    env: process.env.PRUNE_BATCH_ROWS ? { PRUNE_BATCH_ROWS: process.env.PRUNE_BATCH_ROWS } : {},
  });
  const t = await h.tenant();
  await setRateLimit(h.db.kysely, t.keyId, 1_000_000_000);
  const k = h.db.kysely;
  const now = h.clock.now();
  const old = now - 60 * DAY; // past every retention
  const fill = async (label: string, n: number, insert: (from: number, to: number) => Promise<unknown>) => {
    const t0 = Date.now();
    for (let from = 0; from < n; from += CHUNK) await insert(from, Math.min(n, from + CHUNK));
    console.log(`  filled ${n.toLocaleString()} ${label} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  };
  const series = (from: number, to: number) =>
    sql`with recursive c(i) as (select ${from} union all select i + 1 from c where i + 1 < ${to})`;
  console.log('filling (SQLite, one INSERT … SELECT per 250,000 rows)');
  await fill('key uses (95% expired)', KEY_USES, (a, b) =>
    sql`insert into key_uses (key_id, workspace_id, at, ip_masked, method, route, status)
        ${series(a, b)} select 'key_bench', ${t.workspaceId}, case when i % 20 = 0 then ${now} else ${old} + i end,
        null, 'GET', '/v1/me', 200 from c`.execute(k),
  );
  const hook = await h.request('POST', '/v1/hooks', { token: t.token, body: { target_url: 'http://127.0.0.1:9/h' } });
  if (hook.status !== 201) throw new Error(hook.text);
  const hookId = hook.json.id as string;
  await fill('events, each with a settled delivery and 2 attempts', EVENTS, async (a, b) => {
    await k.transaction().execute(async (trx) => {
      await sql`insert into events (id, workspace_id, name, document_id, body, created_at)
          ${series(a, b)} select 'evb_' || i, ${t.workspaceId}, 'signing_request.sent', null, '{}', ${old} + i from c`.execute(
        trx,
      );
      await sql`insert into deliveries (id, event_id, hook_id, workspace_id, status, attempts, next_attempt_at,
            last_status_code, last_error, created_at, updated_at)
          ${series(a, b)} select 'delb_' || i, 'evb_' || i, ${hookId}, ${t.workspaceId}, 'succeeded', 2, null,
            200, null, ${old} + i, ${old} + i from c`.execute(trx);
      await sql`insert into delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code,
            response_body, error, worker)
          ${series(a, b)} select 'delb_' || i, n.n, ${old} + i, 5, 200, 'ok', null, 'bench'
            from c, (select 1 as n union all select 2) n`.execute(trx);
    });
  });

  const url = h.url('/v1/me');
  const headers = { authorization: `Bearer ${t.token}` };
  // The fill's WAL is checkpointed first, so "before" does not pay for it.
  await sql`pragma wal_checkpoint(truncate)`.execute(k);
  await round(url, headers, 2); // warm-up
  const idle = monitorEventLoopDelay({ resolution: 5 });
  idle.enable();
  const before = [await round(url, headers), await round(url, headers), await round(url, headers)];
  idle.disable();
  for (const r of before) console.log(`  before: ${fmt(r)}`);
  console.log(
    `  before: event-loop delay p99 ${(idle.percentile(99) / 1e6).toFixed(1)} ms, max ${(idle.max / 1e6).toFixed(1)} ms`,
  );

  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const t0 = Date.now();
  let done = false;
  const pruning = (async () => {
    const a = await h.runtime.runJob('prune-key-uses');
    const b = await h.runtime.runJob('prune-events');
    done = true;
    return { keyUses: a, events: b, seconds: (Date.now() - t0) / 1000 };
  })();
  const during: LoadReport[] = [];
  while (!done) {
    const r = await round(url, headers);
    during.push(r);
    console.log(`  during: ${fmt(r)}`);
  }
  const result = await pruning;
  loop.disable();
  const after = await round(url, headers);
  console.log(`  after:  ${fmt(after)}`);
  const { batches: b1, deleted: d1 } = result.keyUses as { batches: number; deleted: number };
  const { batches: b2, deleted: d2 } = result.events as { batches: number; deleted: number };
  console.log(
    `pruned ${Number(d1).toLocaleString()} key uses and ${Number(d2).toLocaleString()} event rows in ` +
      `${result.seconds.toFixed(1)} s (${b1 + b2} batches of ≤ ${h.config.retention.batchRows}); ` +
      `event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`,
  );
  const worst = (rs: LoadReport[], f: (r: LoadReport) => number) => Math.max(...rs.map(f));
  console.log(
    `summary: before p50/p99 ${worst(before, (r) => r.p50)}/${worst(before, (r) => r.p99)} ms; ` +
      `during (worst of ${during.length} rounds) ${worst(during, (r) => r.p50)}/${worst(during, (r) => r.p99)} ms`,
  );
  child.kill();
  await h.close();
}

main().catch((err) => {
  console.error(err);
  child.kill();
  process.exit(1);
});
