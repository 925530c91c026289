// `npm run bench:scale [-- --sizes 10000,50000 --databases sqlite,postgres --samples 200]` (issue 25): for each
// database and size, a fresh database seeded with that many documents (src/testing/seed) and settled (the load on
// disk; PostgreSQL vacuumed, as autovacuum would have done), the real app on a real port over it (harness), and every
// hot path's p50/p99 per call; then one table with p99(largest)/p99(smallest).
// The target: that ratio within 1.5 for each path. A benchmark, not a test: it prints, and asserts nothing.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startHarness, type Harness } from '../src/testing/harness.js';
import { seededCopy } from '../src/testing/seed/cache.js';
import { postgresForTests } from '../src/testing/services.js';
import { createBlobStore } from '../src/documents/blob-store.js';
import { setRateLimit } from '../src/keys/keys.repo.js';
import { seedHistory } from '../src/testing/seed/seed.js';
import { settle } from '../src/testing/seed/seed.repo.js';
import { measurePaths, type PathResult } from './scale-paths.js';
import { BENCH_RATE_LIMIT } from './settings.js';

const TARGET_RATIO = 1.5;
/** The biggest history kept between runs (CI's sizes are 10k and 50k). */
const KEPT_SIZE_MAX = 50_000;

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,1000000' },
    databases: { type: 'string', default: 'sqlite,postgres' },
    samples: { type: 'string', default: '200' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const samples = Number(values.samples);
const pg = await postgresForTests();

type Run = { db: string; size: number; seedMs: number | null; rows: number; results: PathResult[] };
const runs: Run[] = [];

console.log(`bench:scale ${new Date().toISOString()}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`);
for (const name of values.databases.split(',')) {
  if (name === 'postgres' && 'skip' in pg) {
    console.log(`postgres: skipped (${pg.skip})`);
    continue;
  }
  for (const size of sizes) {
    const database = name === 'postgres' ? { postgresAdminUrl: (pg as { url: string }).url } : ('sqlite' as const);
    console.log(`${name}, ${size.toLocaleString('en')} documents: seeding …`);
    // Up to KEPT_SIZE_MAX a kept history is copied (seed/cache.ts: in CI the query-plan test seeded it); a bigger
    // one is seeded into a fresh database and dropped after (a million documents take gigabytes).
    const t0 = performance.now();
    const copy = size <= KEPT_SIZE_MAX ? await seededCopy(database, size) : null;
    const h = await startHarness(copy ? copy.harness : { database });
    try {
      const s = copy?.summary ?? (await seedFresh(h, size));
      const rows = Object.values(s.rows).reduce((a, b) => a + (b ?? 0), 0);
      if (copy && !copy.seeded)
        console.log(
          `  copied a kept history of ${rows.toLocaleString('en')} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
        );
      else
        console.log(
          `  seeded ${rows.toLocaleString('en')} rows in ${(s.ms / 1000).toFixed(1)} s ` +
            `(${Math.round(rows / (s.ms / 1000)).toLocaleString('en')} rows/s), load ${os.loadavg()[0]!.toFixed(1)}`,
        );
      await setRateLimit(h.db.kysely, s.keys[0]!.keyId, BENCH_RATE_LIMIT);
      const results = await measurePaths(h, s, samples);
      runs.push({ db: name, size, seedMs: copy && !copy.seeded ? null : s.ms, rows, results });
    } finally {
      await h.close();
    }
  }
}
report(runs);

/** A history seeded into the harness's own database, then settled (on disk; PostgreSQL vacuumed). */
async function seedFresh(h: Harness, size: number) {
  const s = await seedHistory(h.db, {
    documents: size,
    now: h.clock.now(),
    blobs: createBlobStore(h.db, h.clock, h.config.dataDir),
    baseUrl: h.url(''),
  });
  const t0 = performance.now();
  await settle(h.db);
  console.log(`  settled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return s;
}

function report(all: Run[]) {
  console.log('\nSeed times');
  for (const r of all)
    console.log(
      `  ${r.db} ${r.size.toLocaleString('en')}: ${r.seedMs === null ? 'kept (copied)' : `${(r.seedMs / 1000).toFixed(1)} s`}, ${r.rows.toLocaleString('en')} rows`,
    );
  for (const db of new Set(all.map((r) => r.db))) {
    const mine = all.filter((r) => r.db === db).sort((a, b) => a.size - b.size);
    if (mine.length === 0) continue;
    const small = mine[0]!;
    const big = mine[mine.length - 1]!;
    const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
    console.log(`\n${db}: p50 / p99 ms per call, ${label(small.size)} and ${label(big.size)} documents`);
    console.log(
      `| path | ${label(small.size)} p50 | ${label(small.size)} p99 | ${label(big.size)} p50 | ${label(big.size)} p99 | p99 ratio |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const a of small.results) {
      const b = big.results.find((x) => x.path === a.path);
      if (!('t' in a) || !b || !('t' in b)) {
        console.log(`| ${a.path} | ${'error' in a ? a.error : ''} | | ${b && 'error' in b ? b.error : ''} | | |`);
        continue;
      }
      const ratio = b.t.p99 / a.t.p99;
      const flag = ratio > TARGET_RATIO ? ' **not flat**' : '';
      const f = (x: number) => x.toFixed(2);
      console.log(
        `| ${a.path} | ${f(a.t.p50)} | ${f(a.t.p99)} | ${f(b.t.p50)} | ${f(b.t.p99)} | ${ratio.toFixed(2)}${flag} |`,
      );
    }
  }
}
