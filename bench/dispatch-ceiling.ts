// `npm run bench:dispatch` (and the last part of `npm run bench`): Signet's webhook dispatch against the raw ceiling,
// issue 25 point 4. A loopback receiver runs in a process of its own (dispatch-receiver.ts). Per database (SQLite,
// PostgreSQL) and per worker count (1, 2), interleaved rounds of:
// - raw: this process POSTs N bodies, signed with the project's own deliveryHeaders, through an undici Pool of 16;
// - signet: N events are emitted through the real emitter in one transaction while `signet worker` processes (real
//   child processes, already warm and idle) run; timed from just before the commit (its own time included) until
//   no delivery is open, every one of them then checked `succeeded` (recorded, not just received), so the
//   workers' wake-up and their record writes are inside the figure.
// The verdict is the median of the per-round ratios (signet ÷ raw). Bounded: N events per round, a deadline per
// round; children are stopped by their own handles. Prints a table; writes nothing outside its temp directory (but
// DISPATCH_PERF's recordings, a diagnosis: `perf record -a -g` of each signet round into the file it names, .1, .2…).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { Pool } from 'undici';
import { systemClock } from '../src/lib/clock.js';
import { deliveryHeaders } from '../src/webhooks/signature.js';
import { cpuMsOf, idleShare, machineTicks, type MachineTicks } from './proc-cpu.js';
import { createWorkspace } from '../src/workspaces/workspaces.repo.js';
import {
  emitBatch,
  setupDb,
  startReceiver,
  startWorkers,
  stopWorkers,
  succeeded,
  waitSettled,
  type Receiver,
  type Setup,
} from './dispatch-peers.js';

// 20,000: at 3,000 a raw round lasted about 90 ms on a quiet machine, so fixed costs (a worker's wake-up, its first
// claim, the last group commit, this process's polling) weighed as much as the rate being measured.
const N = Number(process.env.DISPATCH_N ?? 20_000);
const ROUNDS = Number(process.env.DISPATCH_ROUNDS ?? 3);
const WORKERS = (process.env.DISPATCH_WORKERS ?? '1,2').split(',').map(Number);
const DBS = (process.env.DISPATCH_DBS ?? 'sqlite,pg').split(',');
const RAW_CONNECTIONS = 16;
const RAW_IN_FLIGHT = 64;
/** Issue 25 point 4, with two workers. */
export const CEILING_TARGETS: Record<string, number> = { sqlite: 0.75, pg: 0.6 };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (x: number) => `${Math.round(100 * x)}%`;

type Body = { id: string; name: string; body: string };

const workersCpuMs = (ws: ChildProcess[]) => ws.reduce((sum, w) => sum + cpuMsOf(w.pid), 0);

/** CPU µs per request or delivery: `cpuUs` the sender's (raw) or the workers' (signet), `rxCpuUs` the receiver's. */
type Round = { perSec: number; cpuUs: number; rxCpuUs: number; dbCpuUs?: number; idle: number; edges?: string };

/** The PostgreSQL backends serving this database's other sessions (the workers' pools); none on SQLite. */
async function backendPids(s: Setup): Promise<number[]> {
  if (!s.url.startsWith('postgres')) return [];
  const r = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(s.db.kysely);
  return r.rows.map((row) => row.pid);
}

/** The ceiling: the same signed POSTs from one process through one undici Pool, as fast as it goes. */
async function raw(rx: Receiver, bodies: Body[], secret: string): Promise<Round> {
  const u = new URL(rx.url);
  const pool = new Pool(u.origin, { connections: RAW_CONNECTIONS, keepAliveTimeout: 30_000 });
  await rx.ask('reset');
  const rx0 = cpuMsOf(rx.child.pid);
  const m0 = machineTicks();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let next = 0;
  const lane = async () => {
    while (next < bodies.length) {
      const b = bodies[next++]!;
      const headers = deliveryHeaders(secret, Math.floor(Date.now() / 1000), b.id, b.name, b.body);
      const res = await pool.request({ path: u.pathname, method: 'POST', headers, body: b.body });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`raw: status ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: RAW_IN_FLIGHT }, lane));
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const idle = idleShare(m0);
  const rxCpuUs = (1000 * (cpuMsOf(rx.child.pid) - rx0)) / bodies.length;
  await pool.close();
  return { perSec: bodies.length / (ms / 1000), cpuUs: (c.user + c.system) / bodies.length, rxCpuUs, idle };
}

let perfRound = 0;
/** The workers' CPU per delivery counts only them: the receiver and the database serve both sides alike. */
async function signet(s: Setup, rx: Receiver, expectTotal: number, ws: ChildProcess[]): Promise<Round> {
  await rx.ask('reset');
  // The round starts before the emit's commit: a worker may see the rows and send before the commit returns here
  // (on SQLite the first request arrived up to 48 ms before a clock started after it).
  let start: { before: Map<number, number>; c0: number; rx0: number; m0: MachineTicks; t0: number } | undefined;
  await emitBatch(s.db, s.wsId, N, async () => {
    start = {
      // The backends alive now, and those the workers' pools open during the round (counted from zero); one that
      // closes during the round is lost to the figure, which is a diagnosis, not the verdict.
      before: new Map((await backendPids(s)).map((pid) => [pid, cpuMsOf(pid)])),
      c0: workersCpuMs(ws),
      rx0: cpuMsOf(rx.child.pid),
      m0: machineTicks(),
      t0: performance.now(),
    };
  });
  const { before, c0, rx0, m0, t0 } = start!;
  const wall0 = performance.timeOrigin + t0;
  // DISPATCH_PERF=FILE: `perf record -a` over each signet round, into FILE.<n> (a diagnosis; perf must be installed).
  const perf = process.env.DISPATCH_PERF
    ? spawn('perf', ['record', '-a', '-g', '-F', '1999', '-o', `${process.env.DISPATCH_PERF}.${++perfRound}`], {
        stdio: 'ignore',
      })
    : null;
  await waitSettled(s, rx, N, t0);
  const ms = performance.now() - t0;
  const idle = idleShare(m0);
  const cpuUs = (1000 * (workersCpuMs(ws) - c0)) / N;
  const rxCpuUs = (1000 * (cpuMsOf(rx.child.pid) - rx0)) / N;
  const after = await backendPids(s);
  const dbCpuUs =
    after.length > 0
      ? (1000 * after.reduce((sum, pid) => sum + ((cpuMsOf(pid) || 0) - (before.get(pid) || 0)), 0)) / N
      : undefined;
  if (perf) await new Promise((r) => perf.once('exit', r).kill('SIGINT'));
  const ok = await succeeded(s.db);
  if (ok !== expectTotal) throw new Error(`dispatch round: ${ok} deliveries succeeded, ${expectTotal} expected`);
  const st = await rx.ask('stats');
  // The round's edges: the workers' wake-up and first claim before the first request, and the last record after the
  // last one (ms), both inside the timed round.
  const edges = `lead ${(st.first - wall0).toFixed(0)} ms, tail ${(wall0 + ms - st.last).toFixed(0)} ms`;
  return { perSec: N / (ms / 1000), cpuUs, rxCpuUs, dbCpuUs, idle, edges };
}

export type CeilingRow = {
  db: string;
  workers: number;
  raw: number[];
  signet: number[];
  ratios: number[];
  /** CPU µs per request (raw sender) and per delivery (all workers together). */
  rawCpu: number[];
  signetCpu: number[];
  /** The receiver's CPU µs per request in the signet rounds, and the PostgreSQL backends' per delivery. */
  rxCpu: number[];
  dbCpu: number[];
  /** The machine's idle share during the raw and the signet rounds: a side with idle CPU was bound by something else. */
  rawIdle: number[];
  signetIdle: number[];
};

export async function dispatchCeiling(): Promise<{ rows: CeilingRow[]; notes: string[]; load: string[] }> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-ceiling-'));
  const rx = await startReceiver();
  const rows: CeilingRow[] = [];
  const notes: string[] = [];
  const load: string[] = [];
  try {
    for (const kind of DBS) {
      const s = await setupDb(kind, tmp, rx.url);
      if (typeof s === 'string') {
        notes.push(`${kind}: skipped, ${s}`);
        continue;
      }
      try {
        // The raw bodies are real events' bodies: emitted into a workspace with no hook, so no delivery is made.
        const spare = await createWorkspace(s.db.kysely, { name: 'Bench raw', tier: 'business' }, systemClock.now());
        await emitBatch(s.db, spare.id, N);
        const bodies = await s.db.kysely
          .selectFrom('events')
          .select(['id', 'name', 'body'])
          .where('workspace_id', '=', spare.id)
          .execute();
        let total = 0;
        for (const workers of WORKERS) {
          const ws = startWorkers(workers, s.url, tmp);
          try {
            // Warm-up, untimed: one whole round of each side, so both are past start-up and JIT compilation (a
            // smaller one left the first timed round at twice the CPU per delivery of the next).
            await raw(rx, bodies, s.hookSecret);
            total += N;
            await signet(s, rx, total, ws);
            const row: CeilingRow = {
              db: kind,
              workers,
              raw: [],
              signet: [],
              ratios: [],
              rawCpu: [],
              signetCpu: [],
              rxCpu: [],
              dbCpu: [],
              rawIdle: [],
              signetIdle: [],
            };
            for (let r = 0; r < ROUNDS; r++) {
              load.push(os.loadavg()[0]!.toFixed(2));
              const a = await raw(rx, bodies, s.hookSecret);
              total += N;
              const b = await signet(s, rx, total, ws);
              row.raw.push(a.perSec);
              row.signet.push(b.perSec);
              row.ratios.push(b.perSec / a.perSec);
              row.rawCpu.push(a.cpuUs);
              row.signetCpu.push(b.cpuUs);
              row.rxCpu.push(b.rxCpuUs);
              if (b.dbCpuUs !== undefined) row.dbCpu.push(b.dbCpuUs);
              row.rawIdle.push(a.idle);
              row.signetIdle.push(b.idle);
              process.stdout.write(
                `  ${kind} ×${workers} round ${r + 1}: raw ${a.perSec.toFixed(0)}/s (${a.cpuUs.toFixed(0)} µs CPU, ` +
                  `receiver ${a.rxCpuUs.toFixed(0)} µs, ${pct(a.idle)} idle), signet ${b.perSec.toFixed(0)}/s (${b.cpuUs.toFixed(0)} µs CPU, ` +
                  `receiver ${b.rxCpuUs.toFixed(0)} µs` +
                  (b.dbCpuUs === undefined ? '' : `, PostgreSQL backends ${b.dbCpuUs.toFixed(0)} µs`) +
                  `, ${pct(b.idle)} idle; ${b.edges})\n`,
              );
            }
            rows.push(row);
          } finally {
            await stopWorkers(ws);
          }
        }
      } finally {
        await s.drop();
      }
    }
  } finally {
    await rx.ask('stop').catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return { rows, notes, load };
}

export function printCeiling(r: { rows: CeilingRow[]; notes: string[]; load: string[] }): boolean {
  const f = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`\nDispatch vs raw ceiling — ${N} deliveries per round, ${ROUNDS} interleaved rounds (raw, signet, …);`);
  console.log('  medians per column; ratio = median of per-round signet ÷ raw (the target is judged on it);');
  console.log('  CPU µs: the raw sender per request, all workers per delivery; CPU ratio = raw µs ÷ workers µs;');
  console.log('  rx µs: the receiver per request (signet rounds); db µs: the PostgreSQL backends per delivery;');
  console.log("  idle: the machine's idle CPU during the raw / signet rounds\n");
  console.log('db      workers   raw/s  signet/s  ratio  raw µs  workers µs  CPU ratio  rx µs  db µs     idle  target');
  let ok = true;
  for (const row of r.rows) {
    const ratio = median(row.ratios);
    const target = row.workers === 2 ? CEILING_TARGETS[row.db] : undefined;
    const verdict = target === undefined ? '' : `${Math.round(100 * target)}% ${ratio >= target ? 'met' : 'MISSED'}`;
    if (target !== undefined && ratio < target) ok = false;
    const rawCpu = median(row.rawCpu);
    const cpu = median(row.signetCpu);
    console.log(
      [
        row.db.padEnd(7),
        String(row.workers).padStart(7),
        f(median(row.raw)).padStart(7),
        f(median(row.signet)).padStart(9),
        `${Math.round(100 * ratio)}%`.padStart(6),
        f(rawCpu).padStart(7),
        f(cpu).padStart(11),
        `${Math.round((100 * rawCpu) / cpu)}%`.padStart(10),
        f(median(row.rxCpu)).padStart(6),
        (row.dbCpu.length > 0 ? f(median(row.dbCpu)) : '-').padStart(6),
        `${pct(median(row.rawIdle))} / ${pct(median(row.signetIdle))}`.padStart(8),
        ` ${verdict}`,
      ].join(' '),
    );
  }
  for (const n of r.notes) console.log(`note: ${n}`);
  console.log(`load (1 min) per round: ${r.load.join(', ')}`);
  return ok;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await dispatchCeiling();
  if (!printCeiling(r)) process.exitCode = 1;
}
