import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './db.js';
import * as m001 from './migrations/001-platform-core.js';
import * as m002 from './migrations/002-job-runs.js';
import * as m003 from './migrations/003-mail-outbox.js';
import * as m004 from './migrations/004-signing.js';
import * as m005 from './migrations/005-templates.js';
import * as m006 from './migrations/006-embedded-sessions.js';
import * as m007 from './migrations/007-dashboard.js';
import * as m008 from './migrations/008-change-notices.js';
import * as m009 from './migrations/009-long-term-signatures.js';
import * as m010 from './migrations/010-signer-copies.js';
import * as m011 from './migrations/011-signer-verification.js';
import * as m012 from './migrations/012-reminders.js';
import * as m013 from './migrations/013-qualified-signatures.js';
import * as m014 from './migrations/014-bulk-sends.js';
import * as m015 from './migrations/015-dashboard-drafts.js';
import * as m016 from './migrations/016-hot-path-indexes.js';
import * as m017 from './migrations/017-retention.js';
import * as m018 from './migrations/018-work-notices.js';
import * as m019 from './migrations/019-callback-hooks.js';
import * as m020 from './migrations/020-claim-room.js';
import * as m021 from './migrations/021-purge.js';
import * as m022 from './migrations/022-workspace-face.js';
import * as m023 from './migrations/023-default-locale.js';
import * as m024 from './migrations/024-attempts-index.js';
import * as m025 from './migrations/025-search-rows.js';
import * as m026 from './migrations/026-search-keys.js';
import * as m027 from './migrations/027-search-keys-plpgsql.js';
import * as m028 from './migrations/028-delivery-queue.js';

// One ordered migration list for both databases; each migration receives the dialect for the rare type difference.
const list: Record<string, { up: (db: any, dialect: Db['dialect']) => Promise<void> }> = {
  '001-platform-core': m001,
  '002-job-runs': m002,
  '003-mail-outbox': m003,
  '004-signing': m004,
  '005-templates': m005,
  '006-embedded-sessions': m006,
  '007-dashboard': m007,
  '008-change-notices': m008,
  '009-long-term-signatures': m009,
  '010-signer-copies': m010,
  '011-signer-verification': m011,
  '012-reminders': m012,
  '013-qualified-signatures': m013,
  '014-bulk-sends': m014,
  '015-dashboard-drafts': m015,
  '016-hot-path-indexes': m016,
  '017-retention': m017,
  '018-work-notices': m018,
  '019-callback-hooks': m019,
  '020-claim-room': m020,
  '021-purge': m021,
  '022-workspace-face': m022,
  '023-default-locale': m023,
  '024-attempts-index': m024,
  '025-search-rows': m025,
  '026-search-keys': m026,
  '027-search-keys-plpgsql': m027,
  '028-delivery-queue': m028,
};

export type MigrationName = keyof typeof list;

/** Applies every migration up to `upTo` (all of them by default; tests build an older schema with it). */
export async function migrateToLatest(db: Db, upTo?: keyof typeof list): Promise<void> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, m] of Object.entries(list)) out[name] = { up: (k) => m.up(k, db.dialect) };
      return out;
    },
  };
  const migrator = new Migrator({ db: db.kysely, provider });
  const { error, results } = upTo ? await migrator.migrateTo(upTo) : await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '?'} failed: ${(error as Error).message}`);
  }
}

/** Whether migration `name` has run on this database (a server started without migrating checks its features). */
export async function migrationApplied(db: Db, name: keyof typeof list): Promise<boolean> {
  try {
    const r = await sql<{ n: number }>`select count(*) as n from kysely_migration where name = ${name}`.execute(
      db.kysely,
    );
    return Number(r.rows[0]?.n ?? 0) > 0;
  } catch {
    return false; // no migration table yet
  }
}
