// The report `npm run bench` prints at the end: the HTTP and dispatch tables, the paired rounds and the targets.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { DispatchResult } from './dispatch-bench.js';
import { median, results, type ServerCost } from './http-rounds.js';
import type { LoadReport } from './load.js';
import {
  DISPATCH_EVENTS,
  DISPATCH_TARGET,
  HTTP_TARGET_RATIO,
  PAIRED_ROUNDS,
  PAIRED_S,
  PG_CREATE_TARGET,
  PG_TARGET_RATIO,
  CREATE_CLIENTS,
} from './settings.js';

export const fmt = (n: number, d = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

function table(head: string[], body: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}

export const loadavg = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

/** The tables and targets, from what the run collected (results) and the dispatch bench, when it ran. */
export function printReport(d: DispatchResult | undefined, perSec: number, loadAtStart: string, started: number): void {
  const byName = (n: string) => results.rows.find((r) => r.name.startsWith(n));
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
      results.rows.map(({ name, r, cost, skipped }) =>
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
  if (results.paired) {
    console.log(`\nPaired rounds (sqlite GET /v1/hooks ÷ bare, ${PAIRED_ROUNDS} rounds of ${PAIRED_S} s, interleaved)`);
    console.log(
      `  by req/s: median ${fmt(100 * median(results.paired.rpsRatios), 1)}% (rounds: ${all(results.paired.rpsRatios)})`,
    );
    console.log(
      `  by server CPU per request: median ${fmt(100 * median(results.paired.cpuRatios), 1)}% (rounds: ${all(results.paired.cpuRatios)})`,
    );
  }
  const httpRatio = results.paired ? median(results.paired.rpsRatios) : NaN;
  console.log('\nTargets');
  console.log(
    `  authenticated GET /v1/hooks on SQLite ≥ ${HTTP_TARGET_RATIO * 100}% of bare (paired median): ${fmt(100 * httpRatio, 1)}% by req/s → ${httpRatio >= HTTP_TARGET_RATIO ? 'MET' : 'MISSED'}` +
      ` (${results.paired ? fmt(100 * median(results.paired.cpuRatios), 1) : '?'}% by server CPU per request)`,
  );
  if (results.pgPaired) {
    for (const [p, r] of [
      ['GET /v1/hooks', results.pgPaired.hooks],
      ['GET /v1/me', results.pgPaired.me],
    ] as const) {
      const m = median(r.rpsRatios);
      console.log(
        `  ${p} on PostgreSQL ≥ ${PG_TARGET_RATIO * 100}% of bare (paired median): ${fmt(100 * m, 1)}% by req/s → ${m >= PG_TARGET_RATIO ? 'MET' : 'MISSED'}` +
          ` (${fmt(100 * median(r.cpuRatios), 1)}% by server CPU per request; rounds ${all(r.rpsRatios)})`,
      );
    }
  }
  if (results.create) {
    const c = results.create;
    const side = (xs: { rps: number; cpuUs: number }[]) =>
      `${fmt(median(xs.map((x) => x.rps)), 1)} req/s, ${fmt(median(xs.map((x) => x.cpuUs)) / 1000, 1)} ms server CPU per document`;
    console.log(
      `  POST /v1/signing-requests, one-page PDF, ${CREATE_CLIENTS} clients (medians of ${c.sqlite.length} interleaved rounds each):`,
    );
    console.log(`    sqlite ${side(c.sqlite)}; pg ${side(c.pg)} (PostgreSQL's own CPU not counted)`);
    const cost = median(c.costRatios);
    const slower = 1 / median(c.rpsRatios);
    console.log(
      `    on PostgreSQL ≤ ${PG_CREATE_TARGET}× SQLite's cost: ${fmt(cost, 2)}× by server CPU per document, ${fmt(slower, 2)}× by req/s → ${Math.max(cost, slower) <= PG_CREATE_TARGET ? 'MET' : 'MISSED'}`,
    );
  }
  if (d)
    console.log(
      `  webhook dispatch ≥ ${DISPATCH_TARGET}/s: ${fmt(perSec)}/s → ${perSec >= DISPATCH_TARGET ? 'MET' : 'MISSED'}`,
    );
  const totalNon2xx = results.rows.reduce((n, r) => n + (r.r ? r.r.non2xx + r.r.warmupNon2xx : 0), 0);
  console.log(`  non-2xx responses across all HTTP scenarios (incl. warm-up): ${totalNon2xx}`);
  for (const n of results.notes) console.log(`  NOTE ${n}`);
  console.log(`  load average (1/5/15 min) at start ${loadAtStart}, at end ${loadavg()}`);
  console.log(`\nTotal bench time ${fmt((performance.now() - started) / 1000, 1)} s`);
}
