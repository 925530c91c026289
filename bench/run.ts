// `npm run bench`: HTTP throughput of the real app (SQLite, PostgreSQL, Redis limiter) against a bare Fastify
// route, creating signing requests on SQLite and PostgreSQL, and webhook dispatch throughput. Prints a table to stdout and writes nothing else; figures are copied
// into BENCHMARKS.md by hand.
//
// Servers run in this process; autocannon runs in a forked child (bench/load.ts) so load generation has its own
// event loop instead of sharing the server's. On a 2-core machine the two processes still share the CPUs.
// The parts: settings.ts, load-child.ts, http-rounds.ts and http-scenarios.ts, dispatch-bench.ts, report.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { dispatch, type DispatchResult } from './dispatch-bench.js';
import { results } from './http-rounds.js';
import { createOnBoth, httpOnPostgres, httpOnSqlite } from './http-scenarios.js';
import { LOAD_CPU, SERVER_CPU, child, pin, pinned } from './load-child.js';
import { fmt, loadavg, printReport } from './report.js';
import { BENCH_RATE_LIMIT, CONNECTIONS, DISPATCH_EVENTS, DURATION_S, QUICK, WARMUP_S } from './settings.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-bench-'));

async function main(): Promise<void> {
  const started = performance.now();
  pin(process.pid, SERVER_CPU);
  const loadAtStart = loadavg();
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

  await httpOnSqlite(tmp);
  await httpOnPostgres(tmp);
  await createOnBoth(tmp);

  let d: DispatchResult | undefined;
  let perSec = NaN;
  if (!QUICK) {
    process.stdout.write(`  dispatch ${fmt(DISPATCH_EVENTS)} events → loopback receiver … `);
    d = await dispatch(tmp);
    perSec = d.delivered / (d.ms / 1000);
    console.log(`${fmt(perSec)} deliveries/s`);
  }

  child?.disconnect();

  printReport(d, perSec, loadAtStart, started);
}

try {
  await main();
} catch (err) {
  results.failures++;
  console.error(err);
  child?.kill();
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
  if (results.failures > 0) process.exitCode = 1;
  // Everything is closed above; if a handle still holds the process, say which rather than hang silently.
  setTimeout(() => {
    console.error('bench: still running 10 s after finishing; open resources:', process.getActiveResourcesInfo());
    process.exit(1);
  }, 10_000).unref();
}
