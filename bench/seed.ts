// `npm run seed -- --documents N [--database URL] [--workspaces W] [--seed S]`: writes a few years of history into
// a database (migrating it first) and prints rows per table and the time. Default database: the app's own
// (DATABASE_URL, else the SQLite file under DATA_DIR); `sqlite:/path/file.db` or `postgres://…` choose another.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openDb } from '../src/db/db.js';
import { createFileBlobStore } from '../src/documents/blob-store.js';
import { seedHistory, type SeedSummary } from '../src/testing/seed/seed.js';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '10000' },
    database: { type: 'string' },
    workspaces: { type: 'string' },
    seed: { type: 'string' },
  },
});
const config = loadConfig(process.env);
const url = values.database ?? config.databaseUrl;
const documents = Number(values.documents);
if (!Number.isInteger(documents) || documents < 1) throw new Error('--documents must be a positive integer');

const db = await openDb(url);
// SQLite keeps blobs as files beside the database file, as the app does (blobHome).
const blobs = url.startsWith('sqlite:')
  ? createFileBlobStore(path.join(path.dirname(url.slice(7)), 'blobs'))
  : undefined;
let last = performance.now();
const summary = await seedHistory(db, {
  documents,
  blobs,
  ...(values.workspaces ? { workspaces: Number(values.workspaces) } : {}),
  ...(values.seed ? { seed: Number(values.seed) } : {}),
  progress(n) {
    if (performance.now() - last < 5_000) return;
    last = performance.now();
    process.stderr.write(`  ${n.toLocaleString('en')} documents…\n`);
  },
});
await db.close();
printSummary(url, summary);

function printSummary(where: string, s: SeedSummary) {
  const total = Object.values(s.rows).reduce((a, b) => a + (b ?? 0), 0);
  console.log(`seeded ${where.replace(/\/\/[^@/]*@/, '//')} in ${(s.ms / 1000).toFixed(1)} s`);
  console.log(`${'table'.padEnd(20)} ${'rows'.padStart(12)}`);
  for (const [t, n] of Object.entries(s.rows)) console.log(`${t.padEnd(20)} ${String(n).padStart(12)}`);
  console.log(`${'total'.padEnd(20)} ${String(total).padStart(12)}  (${Math.round(total / (s.ms / 1000))} rows/s)`);
  console.log(`dominant workspace ${s.workspaces[0]!.id} (${s.workspaces[0]!.documents} documents)`);
}
