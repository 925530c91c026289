// Every configuration the check accepts starts: each integer variable at the minimum and at the maximum of its range
// (config.ts notes every range as it parses, so a new variable is walked too), the server started in this process
// and asked a request; then every variable at its minimum at once, and at its maximum at once, on both databases;
// and one real `signet serve` with every maximum.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { ConfigError, INTEGER_RANGES, loadConfig } from './config.js';
import { JOB_NAMES } from './jobs/names.js';
import { ManualClock } from './lib/clock.js';
import { createMemoryLimiter } from './ratelimit/ratelimit.js';
import { createRuntime } from './runtime.js';
import { openDb, type Db } from './db/db.js';
import { createKey } from './keys/keys.repo.js';
import { createWorkspace } from './workspaces/workspaces.repo.js';
import { startServer } from './testing/child-server.js';
import { bothDatabases, freshPostgres } from './testing/services.js';

const NOW = Date.parse('2026-12-01T10:00:00Z');
loadConfig({});
const RANGES = [...INTEGER_RANGES];
/** A pair the check ties together: at an edge of one, the other follows so that the pair is accepted. */
const COMPANIONS: Record<string, string> = {
  UPLOAD_TIMEOUT_MS: 'REQUEST_TIMEOUT_MS',
  REQUEST_TIMEOUT_MS: 'UPLOAD_TIMEOUT_MS',
};
const at = (edge: 'min' | 'max', names: string[]): Record<string, string> =>
  Object.fromEntries(names.map((n) => [n, String(INTEGER_RANGES.get(n)![edge])]));
const every = (edge: 'min' | 'max') =>
  at(
    edge,
    RANGES.map(([n]) => n),
  );

/**
 * Starts the API in this process with `env`, asks GET /v1/me (the key gate, the database), stops it; the status.
 * With `prune`, the worker too, and every prune job runs once (the retention variables are theirs).
 */
async function startAndAsk(base: Record<string, string>, env: Record<string, string>, token: string, prune = false): Promise<number> {
  const config = loadConfig({ ...base, ...env });
  const clock = new ManualClock(NOW);
  const rt = await createRuntime(config, { api: true, worker: prune, clock, logger: false, limiter: createMemoryLimiter({ clock }) });
  try {
    for (const job of JOB_NAMES.filter((n) => prune && n.startsWith('prune-'))) await rt.runJob(job);
    // PORT is listened on only when it is the variable at its edge (65535 is above Linux's ephemeral range, so
    // nothing but a listener holds it); otherwise any free port.
    await rt.app!.listen({ port: env.PORT === undefined ? 0 : config.port, host: '127.0.0.1' });
    const { port } = rt.app!.server.address() as { port: number };
    const res = await request(`http://127.0.0.1:${port}/v1/me`, { reset: true, headers: { authorization: `Bearer ${token}` } });
    await res.body.text();
    return res.statusCode;
  } finally {
    await rt.close();
  }
} // prettier-ignore

for (const d of await bothDatabases()) {
  describe(`every accepted configuration starts (${d.name})`, { skip: d.skip }, () => {
    const base: Record<string, string> = { LOG_LEVEL: 'silent', SIGNET_ALLOW_PRIVATE_NETWORK: '1' };
    let dir: string;
    let drop = async () => {};
    let token: string;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-edges-'));
      base.DATA_DIR = dir;
      let db: Db;
      if (d.database === 'sqlite') {
        db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
        drop = () => db.close();
      } else {
        const pg = await freshPostgres(d.database.postgresAdminUrl);
        base.DATABASE_URL = pg.url;
        db = pg.db;
        drop = pg.drop;
      }
      const ws = await createWorkspace(db.kysely, { name: 'Edges', tier: 'business' }, NOW);
      token = (await createKey(db.kysely, { workspaceId: ws.id, legacy: false }, NOW)).plaintext;
    });
    after(async () => {
      await drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('every variable at its minimum at once, and at its maximum at once, the prune jobs run', async () => {
      assert.equal(await startAndAsk(base, every('min'), token, true), 200);
      assert.equal(await startAndAsk(base, every('max'), token, true), 200);
      // One past an edge is refused by the check, with one line naming the variable.
      assert.throws(
        () => loadConfig({ ...base, HEADERS_TIMEOUT_MS: '3600001' }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message === 'HEADERS_TIMEOUT_MS must be an integer from 100 to 3600000, got "3600001"',
      );
    });

    // Alone, each edge on SQLite; on PostgreSQL only the pool size touches the database. The retention variables
    // reach only the prune jobs, which ran above with all of them at each end.
    const served = RANGES.filter(([n]) => !/^(RETENTION_|PRUNE_)/.test(n));
    const alone = d.database === 'sqlite' ? served : served.filter(([n]) => n === 'DATABASE_POOL_MAX');
    test(`each of ${alone.length} integer variables alone at its minimum and its maximum`, async () => {
      for (const [name] of alone) {
        for (const edge of ['min', 'max'] as const) {
          const companion = COMPANIONS[name];
          const env = at(edge, companion ? [name, companion] : [name]);
          assert.equal(await startAndAsk(base, env, token), 200, JSON.stringify(env));
        }
      }
    });
  });
}

describe('signet serve at the edges', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-edges-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('every variable at its maximum (an hour for each timeout): it starts, answers and stops', async () => {
    // PORT is the one the harness picks.
    const { PORT: _, ...env } = every('max');
    const server = await startServer(dir, { args: ['--no-worker'], env });
    try {
      const res = await request(`http://127.0.0.1:${server.port}/healthz`, { reset: true });
      assert.equal(res.statusCode, 200);
      await res.body.text();
    } finally {
      server.child.kill('SIGTERM');
    }
    assert.equal((await server.exited).code, 0, server.log());
  });
});
