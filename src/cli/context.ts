// What every `signet` command shares: the loaded config, a database per command, output, the actor, CliError.
import os from 'node:os';
import type { Config } from '../config.js';
import { dbOptions, openDb, type Db } from '../db/db.js';

export class CliError extends Error {}

export const actor = () => `cli:${os.userInfo().username}`;
export const print = (json: boolean, obj: unknown, human: string) => console.log(json ? JSON.stringify(obj) : human);

export let config: Config;
export const setConfig = (c: Config): void => {
  config = c;
};

/** Opens the database, migrating it unless SIGNET_AUTO_MIGRATE=0 (then only `signet migrate` does). */
export async function withDb<T>(fn: (db: Db) => Promise<T>, o: { migrate?: boolean } = {}): Promise<T> {
  const db = await openDb(config.databaseUrl, { ...dbOptions(config), migrate: o.migrate ?? config.autoMigrate });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
