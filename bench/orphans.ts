// The daily orphan sweep at size (issue 26): the real app's SQLite database and file blob store, BENCH_ORPHAN_DOCS
// seeded documents (default 200,000), BENCH_ORPHAN_FILES blob files (default 100,000) each named by a document's
// signed_blob, and 100 files nothing names. Prints how long the check and the sweep take and what they found. Not a
// test: it prints figures for BENCHMARKS.md.
import { sql } from 'kysely';
import { sweepOrphanBlobs } from '../src/documents/blob-orphans.js';
import { BLOB_ORPHAN_GRACE_MS } from '../src/limits.js';
import { seedHistory } from '../src/testing/seed/seed.js';
import { startHarness } from '../src/testing/harness.js';

const DOCS = Number(process.env.BENCH_ORPHAN_DOCS ?? 200_000);
const FILES = Number(process.env.BENCH_ORPHAN_FILES ?? 100_000);
const ORPHANS = 100;

async function main() {
  const h = await startHarness({ start: Date.now() });
  try {
    const blobs = h.runtime.blobs;
    let t0 = Date.now();
    await seedHistory(h.db, { documents: DOCS, now: h.clock.now(), blobs });
    console.log(`seeded ${DOCS.toLocaleString()} documents in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    t0 = Date.now();
    const ids = (await h.db.kysely.selectFrom('documents').select('id').limit(FILES).execute()).map((r) => r.id);
    const bytes = new Uint8Array(2048).fill(7);
    for (let i = 0; i < ids.length; i += 1000) {
      const keys = await Promise.all(ids.slice(i, i + 1000).map(() => blobs.put(bytes, 'signed')));
      await h.db.kysely.transaction().execute(async (trx) => {
        for (const [j, key] of keys.entries())
          await sql`update documents set signed_blob = ${key} where id = ${ids[i + j]}`.execute(trx);
      });
    }
    for (let i = 0; i < ORPHANS; i++) await blobs.put(bytes, 'original');
    console.log(
      `wrote ${ids.length.toLocaleString()} named files and ${ORPHANS} orphans in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    h.clock.set(Date.now() + BLOB_ORPHAN_GRACE_MS + 3600_000);
    for (const remove of [false, true]) {
      t0 = Date.now();
      const r = await sweepOrphanBlobs(h.db, h.clock, blobs, { remove });
      console.log(
        `${remove ? 'sweep' : 'check'}: ${r.checked.toLocaleString()} blobs listed, ${r.orphans.length} orphans` +
          `${remove ? `, ${r.deleted} deleted` : ''} in ${((Date.now() - t0) / 1000).toFixed(2)} s`,
      );
    }
  } finally {
    await h.close();
  }
}

await main();
