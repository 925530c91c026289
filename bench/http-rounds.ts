// Measuring HTTP: one autocannon run per scenario, short paired rounds against bare, and the results they collect.
import { performance } from 'node:perf_hooks';
import { load } from './load-child.js';
import type { LoadReport } from './load.js';
import { CREATE_ROUNDS, CREATE_S, PAIRED_ROUNDS, PAIRED_S } from './settings.js';

/** Server-side cost, measured in this (server) process while the child generates load: CPU time per request
 *  (user+system, all threads, warm-up included) and event-loop utilisation (1.0 = the server was saturated). */
export type ServerCost = { cpuUsPerReq: number; elu: number };
export type Row = { name: string; r?: LoadReport; cost?: ServerCost; skipped?: string };
export type Paired = { rpsRatios: number[]; cpuRatios: number[] };
type Round = { rps: number; cpuUs: number };
/** Create rounds: each database's rounds, and per pair PostgreSQL ÷ SQLite by req/s and by CPU per document. */
export type CreatePaired = { sqlite: Round[]; pg: Round[]; rpsRatios: number[]; costRatios: number[] };
/** What the run collects for the report: a row per scenario, notes, the failure count and the paired rounds. */
export const results: {
  rows: Row[];
  notes: string[];
  failures: number;
  paired?: Paired;
  pgPaired?: { hooks: Paired; me: Paired };
  create?: CreatePaired;
} = {
  rows: [],
  notes: [],
  failures: 0,
};

export async function measure(
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
    results.rows.push({ name, skipped: `error: ${r.error}` });
    results.failures++;
    return undefined;
  }
  const bad = r.non2xx + r.errors + r.warmupNon2xx + r.warmupErrors;
  console.log(
    `${Math.round(r.rps)} req/s, p99 ${r.p99} ms, non-2xx ${r.non2xx} (warm-up ${r.warmupNon2xx}), errors ${r.errors}`,
  );
  if (bad > 0) {
    results.failures++;
    results.notes.push(
      `${name}: ${r.non2xx} non-2xx, ${r.errors} errors (warm-up: ${r.warmupNon2xx} / ${r.warmupErrors}); codes ${JSON.stringify(r.statusCodes)}`,
    );
  }
  results.rows.push({
    name,
    r,
    cost: { cpuUsPerReq: (cpu.user + cpu.system) / Math.max(1, r.total + r.warmupTotal), elu },
  });
  return r;
}

/** One short round: req/s and server CPU µs per request (PDF worker threads included: they are this process's). */
async function round(url: string, headers: Record<string, string>, create = false): Promise<Round> {
  const cpu0 = process.cpuUsage();
  const r = await load(url, headers, create ? CREATE_S : PAIRED_S, 0.5, create);
  const cpu = process.cpuUsage(cpu0);
  if (r.error || r.non2xx + r.errors > 0)
    throw new Error(`paired round against ${url} failed: ${r.error ?? JSON.stringify(r.statusCodes)}`);
  return { rps: r.rps, cpuUs: (cpu.user + cpu.system) / Math.max(1, r.total + r.warmupTotal) };
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Rounds of the app and bare back to back, in alternating order; ratios per round, judged on their medians. */
export async function pairedRounds(
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

/** Create rounds on two servers in alternating order (SQLite, PostgreSQL, PostgreSQL, SQLite, …). */
export async function pairedCreate(
  sqlite: { url: string; headers: Record<string, string> },
  pg: { url: string; headers: Record<string, string> },
): Promise<CreatePaired> {
  const out: CreatePaired = { sqlite: [], pg: [], rpsRatios: [], costRatios: [] };
  for (let i = 0; i < CREATE_ROUNDS; i++) {
    const order = i % 2 === 0 ? [sqlite, pg] : [pg, sqlite];
    const [r1, r2] = [
      await round(order[0]!.url, order[0]!.headers, true),
      await round(order[1]!.url, order[1]!.headers, true),
    ];
    const [s, p] = order[0] === sqlite ? [r1, r2] : [r2, r1];
    out.sqlite.push(s);
    out.pg.push(p);
    out.rpsRatios.push(p.rps / s.rps);
    out.costRatios.push(p.cpuUs / s.cpuUs);
  }
  return out;
}

export function skip(name: string, reason: string): void {
  console.log(`  ${name} … skipped: ${reason}`);
  results.rows.push({ name, skipped: reason });
}
