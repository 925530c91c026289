// The settings of `npm run bench` (run.ts): load shape, scenario sizes, targets, quick mode and the host.
export const CONNECTIONS = 50;
export const DURATION_S = 8;
export const WARMUP_S = 2;
/** Per-key limit set on the benchmark key so the 60/min default never caps throughput (noted in the output). */
export const BENCH_RATE_LIMIT = 1_000_000_000;
/** Hooks in the benchmark workspace: GET /v1/hooks returns this many. */
export const HOOKS = 3;
export const DISPATCH_EVENTS = 5_000;
export const EMIT_BATCH = 500;
export const DISPATCH_DEADLINE_MS = 60_000;
export const HTTP_TARGET_RATIO = 0.75;
/** Issue 25 (issue 12 asked 35%): GET /v1/hooks and GET /v1/me on PostgreSQL, paired median by req/s vs bare. */
export const PG_TARGET_RATIO = 0.6;
/** Issue 25: creating a signing request (one-page PDF) on PostgreSQL costs at most this many times SQLite's. */
export const PG_CREATE_TARGET = 2;
/** Clients of the create scenario (issue 25: 8 concurrent), each POSTing back to back. */
export const CREATE_CLIENTS = 8;
/** Interleaved rounds of the create scenario, SQLite and PostgreSQL alternating, and their length. */
export const CREATE_ROUNDS = 6;
export const CREATE_S = 4;
/** The target is judged on interleaved rounds (app, bare, bare, app, …) so drifting load on the host hits both. */
export const PAIRED_ROUNDS = 6;
export const PAIRED_S = 3;
export const DISPATCH_TARGET = 500;

/**
 * `BENCH_QUICK=1`: only SQLite /v1/hooks, /v1/me and bare; `BENCH_QUICK=pg`: those and the PostgreSQL rows (for
 * iterating on a hot path; not for BENCHMARKS.md).
 */
export const QUICK_PG = process.env.BENCH_QUICK === 'pg';
export const QUICK = process.env.BENCH_QUICK === '1' || QUICK_PG;

export const HOST = '127.0.0.1';
