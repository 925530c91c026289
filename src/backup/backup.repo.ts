// The SQLite side of a backup: a consistent copy of a live database file, and what a copy references.
import Sqlite from 'better-sqlite3';

/** The tables whose row counts a backup reports (and a restore can be compared with). */
export const COUNTED_TABLES = ['workspaces', 'documents', 'signing_requests', 'audit_events', 'templates'] as const;
export type TableCounts = Record<(typeof COUNTED_TABLES)[number], number>;

/**
 * Copies the live database `file` to `dest` with SQLite's online backup API, through a connection of its own: the
 * copy is one committed state while other processes keep writing. A step that sees another connection's write
 * starts over, so after the first step the rest is copied in one (a read transaction, which WAL lets writers pass).
 */
export async function snapshotSqlite(file: string, dest: string): Promise<void> {
  // Not read-only: a read-only connection cannot open a WAL database whose shared-memory file is absent.
  const db = new Sqlite(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(dest, { progress: ({ totalPages }) => Math.max(totalPages, 100) * 2 });
  } finally {
    db.close();
  }
}

/**
 * What the snapshot at `file` holds: the blob keys it names (every column named `*_blob`, the schema's convention for
 * a blob reference) and the row counts of COUNTED_TABLES.
 */
export function readSnapshot(file: string): { blobKeys: Set<string>; counts: TableCounts } {
  const db = new Sqlite(file, { fileMustExist: true });
  try {
    const tables = db
      .prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`)
      .pluck()
      .all() as string[];
    const blobKeys = new Set<string>();
    for (const t of tables) {
      const columns = (db.pragma(`table_info(${quote(t)})`) as { name: string }[])
        .map((c) => c.name)
        .filter((c) => c.endsWith('_blob'));
      for (const c of columns)
        for (const k of db
          .prepare(`select distinct ${quote(c)} from ${quote(t)} where ${quote(c)} is not null`)
          .pluck()
          .iterate())
          blobKeys.add(k as string);
    }
    const counts = Object.fromEntries(
      COUNTED_TABLES.map((t) => [
        t,
        tables.includes(t)
          ? (db
              .prepare(`select count(*) from ${quote(t)}`)
              .pluck()
              .get() as number)
          : 0,
      ]),
    ) as TableCounts;
    return { blobKeys, counts };
  } finally {
    db.close();
  }
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;
