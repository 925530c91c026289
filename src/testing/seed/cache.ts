// Seeded histories made once and copied: the query-plan test and `bench:scale` in CI both need 50k documents on
// each database, and seeding them costs the suite about a minute per database. A history is kept per database kind
// and document count, keyed by every source module (tests excepted), so a kept one is never older than the code
// that reads it: SQLite as a file (with its blobs) under the temp folder, PostgreSQL as a database copied file by
// file. Each caller gets its own copy, so what one test writes no other sees. `dropSeedCache` removes them all
// (.ci/run does at its end).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDb } from '../../db/db.js';
import { createBlobStore } from '../../documents/blob-store.js';
import type { HarnessOptions } from '../harness.js';
import { dropPostgres, freshPostgres, keepPostgres, keptPostgres } from '../services.js';
import { seedHistory, type SeedSummary } from './seed.js';
import { settle } from './seed.repo.js';

const CACHE_DIR = path.join(os.tmpdir(), 'signet-seed-cache');
const PG_PREFIX = 'signet_seed_';
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export type SeededCopy = {
  summary: SeedSummary;
  /** Whether this call seeded the kept history (else it was there): `summary.ms` is then this call's seeding. */
  seeded: boolean;
  /** Harness options that open this copy: `startHarness({ ...copy.harness, … })`; the harness removes it at close. */
  harness: Pick<HarnessOptions, 'database' | 'dataDir'>;
};

/**
 * A fresh copy of a settled history of `documents` documents (seed 25, ending at the seeder's default `now`, the
 * harness's default start), seeded first if no current one is kept.
 */
export async function seededCopy(
  database: 'sqlite' | { postgresAdminUrl: string },
  documents: number,
): Promise<SeededCopy> {
  const kind = database === 'sqlite' ? 'sqlite' : 'pg';
  const key = `${kind}_${documents}_${codeHash()}`;
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const summaryFile = path.join(CACHE_DIR, `${key}.json`);
  if (database === 'sqlite') {
    const kept = path.join(CACHE_DIR, key);
    const seeded = !fs.existsSync(summaryFile) || !fs.existsSync(kept);
    if (seeded) await keepSqlite(kept, summaryFile, documents);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-test-'));
    fs.cpSync(kept, dataDir, { recursive: true });
    return { summary: readSummary(summaryFile), seeded, harness: { database: 'sqlite', dataDir } };
  }
  const admin = database.postgresAdminUrl;
  const name = `${PG_PREFIX}${key}`;
  const seeded = !fs.existsSync(summaryFile) || !(await keptPostgres(admin, `${PG_PREFIX}%`)).includes(name);
  if (seeded) await keepPg(admin, name, summaryFile, documents);
  return { summary: readSummary(summaryFile), seeded, harness: { database: { postgresAdminUrl: admin, from: name } } };
}

async function keepSqlite(kept: string, summaryFile: string, documents: number) {
  evict(`sqlite_${documents}_`);
  const dir = fs.mkdtempSync(path.join(CACHE_DIR, 'building-'));
  const db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  let summary: SeedSummary;
  try {
    summary = await seedHistory(db, { documents, blobs: createBlobStore(db, { now: () => Date.now() }, dir) });
    await settle(db);
  } finally {
    await db.close();
  }
  fs.rmSync(kept, { recursive: true, force: true });
  fs.renameSync(dir, kept);
  writeSummary(summaryFile, summary);
}

async function keepPg(admin: string, name: string, summaryFile: string, documents: number) {
  evict(`pg_${documents}_`);
  for (const old of await keptPostgres(admin, `${PG_PREFIX}pg\\_${documents}\\_%`))
    if (old !== name) await dropPostgres(admin, old);
  const fresh = await freshPostgres(admin);
  let summary: SeedSummary;
  try {
    summary = await seedHistory(fresh.db, { documents });
    await settle(fresh.db);
  } catch (err) {
    await fresh.drop();
    throw err;
  }
  await fresh.db.close();
  await keepPostgres(admin, fresh.url, name);
  writeSummary(summaryFile, summary);
}

/** Written last and renamed into place: a summary on disk means its history is complete. */
function writeSummary(file: string, summary: SeedSummary) {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(summary));
  fs.renameSync(`${file}.tmp`, file);
}
const readSummary = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as SeedSummary;

/** The kept files (SQLite histories, summaries) of one kind and size, before a new one is made. */
function evict(prefix: string) {
  for (const f of fs.readdirSync(CACHE_DIR))
    if (f.startsWith(prefix)) fs.rmSync(path.join(CACHE_DIR, f), { recursive: true, force: true });
}

/** Every kept history, on disk and in PostgreSQL. */
export async function dropSeedCache(postgresAdminUrl?: string): Promise<string[]> {
  const gone = fs.existsSync(CACHE_DIR) ? fs.readdirSync(CACHE_DIR) : [];
  fs.rmSync(CACHE_DIR, { recursive: true, force: true });
  if (postgresAdminUrl)
    for (const name of await keptPostgres(postgresAdminUrl, `${PG_PREFIX}%`)) {
      await dropPostgres(postgresAdminUrl, name);
      gone.push(name);
    }
  return gone;
}

let hashed: string | undefined;
/**
 * Every source module but the tests and declarations, by path and content: a kept history is as current as its
 * code. The same in the test tree (scripts/test-build.mjs: a folder of declarations only is a link there).
 */
function codeHash(): string {
  if (hashed) return hashed;
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/(?<!\.test|\.d)\.ts$/.test(e.name)) h.update(path.relative(SRC, p)).update(fs.readFileSync(p));
    }
  };
  walk(SRC);
  hashed = h.digest('hex').slice(0, 12);
  return hashed;
}
