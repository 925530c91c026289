// `signet backup`: one archive (archive.ts) of what DATA_DIR holds for the server, taken while it serves and writes.
// Guarantees: on SQLite the database is one committed state, copied first (snapshotSqlite); blobs and the PKI are
// read after it. A blob is immutable once written and renamed into place before the row naming it commits, and a
// PKI generation is added, never replaced, so what the snapshot names is there to copy, unless a purge deleted the
// blob since: then the backup starts over from a new snapshot (which no longer names it), and fails after ATTEMPTS
// rather than leave out a blob the snapshot names. A blob written after the snapshot may be in the archive (an
// orphan, as a failed upload's is) but nothing in it needs one. On PostgreSQL the database, blobs
// included, is pg_dump's to back up; the archive holds the PKI.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqliteFileOf } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { SourceGone, writeArchive, type ManifestEntry, type Source } from './archive.js';
import { readSnapshot, snapshotSqlite, type TableCounts } from './backup.repo.js';
import { KEY_FILE, NEW_KEY_FILE } from '../secrets/keyring.js';

const SECRET_KEY_FILES = [KEY_FILE, NEW_KEY_FILE];

export const FORMAT = { format: 'signet-backup', version: 1 } as const;
/** The archive's name for the SQLite database; restore puts it where DATABASE_URL says. */
export const DATABASE_ENTRY = 'signet.db';
export const BLOB_FILE = /^[0-9a-f]{32}$/;
/** What `pg_dump` is run as on PostgreSQL (the URL stays in the environment: it may hold a password). */
export const PG_DUMP = 'pg_dump --format=custom --file=signet.dump "$DATABASE_URL"';

export type BackupOptions = { dataDir: string; databaseUrl: string; to: string; clock: Clock };

export type BackupSummary = {
  file: string;
  bytes: number;
  created_at: string;
  database: 'sqlite' | 'postgres';
  /** Row counts of the snapshot (SQLite); null on PostgreSQL, whose rows are not in the archive. */
  counts: TableCounts | null;
  entries: number;
  blobs: number;
  pki_files: number;
  /** What this archive does not cover and how to back it up. */
  not_covered: string[];
  /** DATA_DIR entries left out: nothing the server reads. */
  skipped: string[];
};

export async function runBackup(o: BackupOptions): Promise<BackupSummary> {
  const sqlite = sqliteFileOf(o.databaseUrl);
  if (sqlite === ':memory:') throw new Error('DATABASE_URL names an in-memory database: nothing to back up');
  if (sqlite && !(await isFile(sqlite))) throw new Error(`there is no database at ${sqlite}: nothing to back up`);
  if (await exists(o.to)) throw new Error(`${o.to} already exists`);
  await fs.mkdir(path.dirname(o.to), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    try {
      return await backupOnce(o, sqlite);
    } catch (err) {
      // A blob the snapshot names was purged before it was copied: a newer snapshot no longer names it.
      if (!(err instanceof SourceGone) || attempt === ATTEMPTS) throw err;
    }
  }
}

const ATTEMPTS = 3;

async function backupOnce(o: BackupOptions, sqlite: string | null): Promise<BackupSummary> {
  const work = await fs.mkdtemp(path.join(path.dirname(o.to), '.signet-backup-'));
  try {
    let snapshot: ReturnType<typeof readSnapshot> | null = null;
    if (sqlite) {
      await snapshotSqlite(sqlite, path.join(work, DATABASE_ENTRY)).catch((err: Error) => {
        throw new Error(`cannot copy the database ${sqlite}: ${err.message}`);
      });
      snapshot = readSnapshot(path.join(work, DATABASE_ENTRY));
    }
    const createdAt = new Date(o.clock.now()).toISOString();
    const manifest = (entries: ManifestEntry[]) => ({
      ...FORMAT,
      created_at: createdAt,
      database: sqlite ? 'sqlite' : 'postgres',
      counts: snapshot?.counts ?? null,
      entries,
    });
    const entries = await writeArchive(
      o.to,
      sources(o.dataDir, work, snapshot?.blobKeys ?? null),
      manifest,
      o.clock.now(),
    );
    const notCovered = sqlite
      ? []
      : [`the PostgreSQL database (every row and blob): back it up with ${PG_DUMP}, run before signet backup`];
    return {
      file: o.to,
      bytes: (await fs.stat(o.to)).size,
      created_at: createdAt,
      database: sqlite ? 'sqlite' : 'postgres',
      counts: snapshot?.counts ?? null,
      entries: entries.length,
      blobs: entries.filter((e) => e.name.startsWith('blobs/')).length,
      pki_files: entries.filter((e) => e.name.startsWith('pki/')).length,
      not_covered: notCovered,
      skipped: await skipped(o.dataDir, sqlite),
    };
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** The database snapshot, then the blob files (when `blobKeys`: on disk), then the PKI, listed only now. */
async function* sources(dataDir: string, work: string, blobKeys: Set<string> | null): AsyncGenerator<Source> {
  if (blobKeys) {
    yield { name: DATABASE_ENTRY, file: path.join(work, DATABASE_ENTRY), required: true };
    const found = new Set<string>();
    const root = path.join(dataDir, 'blobs');
    for (const kind of await dirs(root))
      for (const f of await files(path.join(root, kind))) {
        if (!BLOB_FILE.test(f)) continue; // a put's temp file
        const key = `${kind}/${f}`;
        found.add(key);
        yield { name: `blobs/${key}`, file: path.join(root, key), required: blobKeys.has(key) };
      }
    const missing = [...blobKeys].find((k) => !found.has(k));
    if (missing) throw new SourceGone(`blobs/${missing}`);
  }
  yield* tree(path.join(dataDir, 'pki'), 'pki');
  // The generated key of secrets at rest (SQLite default): without it the hook secrets and PKI keys do not open.
  for (const name of SECRET_KEY_FILES) {
    const file = path.join(dataDir, name);
    if (await isFile(file)) yield { name, file, required: true };
  }
}

async function* tree(dir: string, name: string): AsyncGenerator<Source> {
  for (const e of await entries(dir)) {
    if (e.name.startsWith('.')) continue;
    if (e.isDirectory()) yield* tree(path.join(dir, e.name), `${name}/${e.name}`);
    else if (e.isFile()) yield { name: `${name}/${e.name}`, file: path.join(dir, e.name), required: true };
  }
}

const exists = (p: string) => fs.lstat(p).then(yes, no);
const isFile = (p: string) => fs.stat(p).then((st) => st.isFile(), no);
const yes = () => true;
const no = () => false;
const entries = (dir: string) =>
  fs.readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
const dirs = async (dir: string) => (await entries(dir)).filter((e) => e.isDirectory()).map((e) => e.name);
const files = async (dir: string) => (await entries(dir)).filter((e) => e.isFile()).map((e) => e.name);

/** Top-level DATA_DIR entries the archive leaves out (besides the live database's own files and temp folders). */
async function skipped(dataDir: string, sqlite: string | null): Promise<string[]> {
  const live = sqlite ? ['', '-wal', '-shm', '-journal'].map((s) => path.resolve(sqlite + s)) : [];
  return (await entries(dataDir))
    .map((e) => e.name)
    .filter((n) => !n.startsWith('.') && n !== 'pki' && !(n === 'blobs' && sqlite) && !SECRET_KEY_FILES.includes(n))
    .filter((n) => !live.includes(path.resolve(dataDir, n)))
    .sort();
}
