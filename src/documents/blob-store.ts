// PDFs and signature images, where db/ says they live (`blobHome`): files under DATA_DIR/blobs (written atomically,
// by temp file + rename) beside the embedded default, or database rows, so every instance sees every blob and a
// blob written inside a transaction commits with it. Keys are generated here, never taken from a caller.
// A file written for a transaction (`trx` given) is removed again if that transaction rolls back (db.onRollback), so
// a write refused for lack of space, or any other failure after the put, leaves no orphan file.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { blobHome, type Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { blobKeysBefore } from './blob-orphans.repo.js';

export type BlobStore = {
  /** Stores bytes under a new key; `trx` makes the write part of that transaction where the store can. */
  put(bytes: Uint8Array, kind: string, trx?: Kysely<Database>): Promise<string>;
  get(key: string): Promise<Uint8Array>;
  /** Deletes a blob; one already gone is no error (a retried deletion). Only documents/blob-deletions.ts calls it. */
  delete(key: string): Promise<void>;
  /** Every key written before `before` (epoch ms; a file's modification time), for the orphan check only. */
  list(before: number): AsyncIterable<string>;
};

const newKey = (kind: string) => `${kind}/${randomBytes(16).toString('hex')}`;
const KEY_SHAPE = /^[a-z-]+\/[0-9a-f]{32}$/;

export function createFileBlobStore(
  dir: string,
  onRollback: ((undo: () => Promise<void>) => void) | null = null,
): BlobStore {
  // Each kind's folder is made once per process, not on every put; one removed since is made again.
  const made = new Set<string>();
  return {
    async put(bytes, kind, trx) {
      const key = newKey(kind);
      const file = path.join(dir, key);
      const folder = path.dirname(file);
      if (!made.has(folder)) await fs.mkdir(folder, { recursive: true });
      made.add(folder);
      const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        try {
          await fs.writeFile(tmp, bytes);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
          await fs.mkdir(folder, { recursive: true });
          await fs.writeFile(tmp, bytes);
        }
        await fs.rename(tmp, file);
      } catch (err) {
        // A full disk leaves a partly written temp file: it goes, so a failed put leaves nothing behind.
        await fs.rm(tmp, { force: true }).catch(() => undefined);
        throw err;
      }
      if (trx) onRollback?.(() => fs.rm(file, { force: true }));
      return key;
    },
    async get(key) {
      if (!KEY_SHAPE.test(key)) throw new Error('bad blob key');
      return new Uint8Array(await fs.readFile(path.join(dir, key)));
    },
    async delete(key) {
      if (!KEY_SHAPE.test(key)) throw new Error('bad blob key');
      await fs.rm(path.join(dir, key), { force: true });
    },
    async *list(before) {
      // Temp files (`<key>.<hex>.tmp`) are not keys: a failed put removes its own.
      for (const kind of await fs.readdir(dir).catch(() => [] as string[])) {
        const folder = path.join(dir, kind);
        const entries = await fs.opendir(folder).catch(() => null);
        if (!entries) continue;
        for await (const e of entries) {
          const key = `${kind}/${e.name}`;
          if (!e.isFile() || !KEY_SHAPE.test(key)) continue;
          const st = await fs.stat(path.join(folder, e.name)).catch(() => null);
          if (st && st.mtimeMs < before) yield key;
        }
      }
    },
  };
}

export function createDbBlobStore(db: Db, clock: Clock): BlobStore {
  return {
    async put(bytes, kind, trx) {
      const key = newKey(kind);
      await (trx ?? db.kysely)
        .insertInto('blobs')
        .values({
          key,
          data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          size: bytes.byteLength,
          created_at: clock.now(),
        })
        .execute();
      return key;
    },
    async get(key) {
      const row = await db.kysely.selectFrom('blobs').select('data').where('key', '=', key).executeTakeFirstOrThrow();
      return new Uint8Array(row.data);
    },
    async delete(key) {
      await db.kysely.deleteFrom('blobs').where('key', '=', key).execute();
    },
    async *list(before) {
      let after = '';
      for (;;) {
        const keys = await blobKeysBefore(db.kysely, before, after, 1000);
        yield* keys;
        if (keys.length < 1000) return;
        after = keys.at(-1)!;
      }
    },
  };
}

/** The store where the database says blobs live (`blobHome`). */
export const createBlobStore = (db: Db, clock: Clock, dataDir: string): BlobStore =>
  blobHome(db) === 'database'
    ? createDbBlobStore(db, clock)
    : createFileBlobStore(path.join(dataDir, 'blobs'), db.onRollback);
