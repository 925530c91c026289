// Last-used time and masked IP per key, kept in memory and flushed in one transaction every few seconds, so the
// hot path never waits on a write. A crash loses at most one interval of "last used" display data, nothing else.
import type { Db } from '../db/db.js';
import { recordLastUsed } from './keys.repo.js';

export type LastUsedRecorder = {
  note(keyId: string, at: number, maskedIp: string | null): void;
  flush(): Promise<void>;
  close(): Promise<void>;
};

export function createLastUsedRecorder(db: Db, intervalMs = 5000): LastUsedRecorder {
  let pending = new Map<string, { at: number; ip: string | null }>();
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (pending.size === 0) return flushing;
    const batch = pending;
    pending = new Map();
    flushing = flushing.then(() => recordLastUsed(db.kysely, batch).catch(() => undefined));
    return flushing;
  };
  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();
  return {
    note(keyId, at, ip) {
      pending.set(keyId, { at, ip });
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
