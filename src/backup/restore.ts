// `signet restore FILE`: a backup (backup.ts) back into an empty DATA_DIR. Guarantees: nothing is written into
// DATA_DIR until the whole archive has been read and every entry matched its manifest entry (size and SHA-256); it
// is unpacked into a folder beside DATA_DIR that becomes DATA_DIR with one rename, so a refused or failed restore
// leaves DATA_DIR as it was (empty or absent) and removes its folder.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqliteFileOf } from '../db/db.js';
import { readArchive } from './archive.js';
import type { TableCounts } from './backup.repo.js';
import { DATABASE_ENTRY, FORMAT, PG_DUMP } from './backup.js';

/** A restore refused before anything was written; the message is one line. */
export class RestoreError extends Error {}

export type RestoreOptions = { archive: string; dataDir: string; databaseUrl: string };

export type RestoreSummary = {
  data_dir: string;
  created_at: string;
  database: 'sqlite' | 'postgres';
  counts: TableCounts | null;
  entries: number;
  /** What the operator still has to restore by hand. */
  not_covered: string[];
};

/**
 * The only names an archive may hold: the database, blob files, PKI files and the generated key of secrets at rest
 * (no `..`, no hidden names).
 */
const ALLOWED = /^(signet\.db|blobs\/[a-z-]+\/[0-9a-f]{32}|pki(\/[a-z0-9][a-z0-9.-]*)+|secret\.key(\.new)?)$/;

export async function runRestore(o: RestoreOptions): Promise<RestoreSummary> {
  const sqlite = sqliteFileOf(o.databaseUrl);
  if (sqlite === ':memory:')
    throw new RestoreError('DATABASE_URL names an in-memory database: nothing to restore into');
  const dbPlace = sqlite ? path.relative(o.dataDir, path.resolve(sqlite)) : null;
  if (dbPlace !== null && (dbPlace.startsWith('..') || path.isAbsolute(dbPlace)))
    throw new RestoreError(`the SQLite file ${sqlite} is outside DATA_DIR ${o.dataDir}: restore puts it inside`);
  await fs.access(o.archive).catch((err: NodeJS.ErrnoException) => {
    throw new RestoreError(`cannot read ${o.archive}: ${err.code ?? err.message}`);
  });
  const existing = await fs.readdir(o.dataDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw new RestoreError(`cannot read DATA_DIR ${o.dataDir}: ${err.code ?? err.message}`);
  });
  if (existing && existing.length > 0)
    throw new RestoreError(`DATA_DIR ${o.dataDir} is not empty: restore only into an empty one`);

  // An absent DATA_DIR is made by one rename of the folder beside it. An existing one may be a mount point (a
  // volume), which no rename replaces: the files are staged in a hidden folder inside it and moved up when verified.
  const parent = path.dirname(o.dataDir);
  if (!existing) await fs.mkdir(parent, { recursive: true });
  const tmp = existing
    ? await fs.mkdtemp(path.join(o.dataDir, '.restore-'))
    : await fs.mkdtemp(path.join(parent, `.${path.basename(o.dataDir)}.restore-`));
  try {
    const { manifest, entries } = await readArchive(o.archive, tmp, (name) => ALLOWED.test(name));
    if (manifest.format !== FORMAT.format || manifest.version !== FORMAT.version)
      throw new RestoreError('not a Signet backup (unknown manifest format)');
    const database = manifest.database === 'sqlite' ? 'sqlite' : 'postgres';
    if (database === 'sqlite' && !sqlite)
      throw new RestoreError('the archive holds a SQLite database but DATABASE_URL is PostgreSQL: unset it to restore');
    if (database === 'postgres' && sqlite)
      throw new RestoreError(
        'the archive is from PostgreSQL (no database inside): set DATABASE_URL to the restored one',
      );
    if (database === 'sqlite' && !entries.some((e) => e.name === DATABASE_ENTRY))
      throw new RestoreError('archive is damaged (no database in a SQLite backup)');
    if (dbPlace !== null && dbPlace !== DATABASE_ENTRY) {
      await fs.mkdir(path.dirname(path.join(tmp, dbPlace)), { recursive: true });
      await fs.rename(path.join(tmp, DATABASE_ENTRY), path.join(tmp, dbPlace));
    }
    await publish(tmp, o.dataDir, !!existing).catch((err: NodeJS.ErrnoException) => {
      throw new RestoreError(`cannot move the restored files into ${o.dataDir}: ${err.code ?? err.message}`);
    });
    return {
      data_dir: o.dataDir,
      created_at: String(manifest.created_at),
      database,
      counts: (manifest.counts as TableCounts | null) ?? null,
      entries: entries.length,
      not_covered:
        database === 'postgres'
          ? [`the PostgreSQL database: pg_restore --dbname="$DATABASE_URL" signet.dump (the dump of ${PG_DUMP})`]
          : [],
    };
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    const why = err instanceof Error ? err.message : String(err);
    throw new RestoreError(`${o.archive}: ${why}; nothing was restored`);
  }
}

/** Moves the verified files into DATA_DIR; a move that fails half-way takes back what it moved. */
async function publish(staged: string, dataDir: string, inside: boolean): Promise<void> {
  if (!inside) return fs.rename(staged, dataDir);
  const moved: string[] = [];
  try {
    for (const name of await fs.readdir(staged)) {
      await fs.rename(path.join(staged, name), path.join(dataDir, name));
      moved.push(name);
    }
  } catch (err) {
    for (const name of moved) await fs.rm(path.join(dataDir, name), { recursive: true, force: true });
    throw err;
  }
  await fs.rmdir(staged);
}
