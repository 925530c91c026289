// Starts the real app on a real loopback port with a real database (SQLite file or a fresh PostgreSQL database)
// and gives tests an HTTP client that can pick its source address. Nothing here mocks a Signet module.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request as undiciRequest } from 'undici';
import type { App } from '../app.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { loadConfig, type Config } from '../config.js';
import { openDb, type Db } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { createKey } from '../keys/keys.repo.js';
import { createMemoryLimiter, type RateLimiter } from '../ratelimit/ratelimit.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { freshPostgres } from './services.js';

export type Harness = {
  app: App;
  runtime: Runtime;
  /** Runs due background work (sealing, mail, webhook deliveries) until none is left. */
  work(): Promise<void>;
  db: Db;
  clock: ManualClock;
  config: Config;
  port: number;
  url(path: string, host?: string): string;
  workspace(tier?: string, name?: string): Promise<{ id: string; name: string; slug: string; tier: string }>;
  key(workspaceId: string, opts?: { legacy?: boolean }): Promise<{ id: string; plaintext: string }>;
  /** A workspace with one key, ready to call. */
  tenant(tier?: string): Promise<{ workspaceId: string; keyId: string; token: string }>;
  request(method: string, p: string, opts?: RequestOptions): Promise<Res>;
  close(): Promise<void>;
};

export type RequestOptions = {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Source address of the client socket (e.g. 127.0.0.2, ::1). */
  localAddress?: string;
  /** Host to connect to (default 127.0.0.1). */
  host?: string;
};

export type Res = { status: number; headers: Record<string, string>; text: string; json: any };

export type HarnessOptions = {
  /** PostgreSQL: a fresh database, or a copy of `from` (a kept one: seed/cache.ts). */
  database?: 'sqlite' | { postgresAdminUrl: string; from?: string };
  limiter?: (clock: ManualClock) => RateLimiter;
  /** Listen host: 127.0.0.1 by default; '::1' for IPv6 callers; '::ffff:127.0.0.1' shows IPv4 peers as mapped. */
  listenHost?: string;
  env?: Record<string, string>;
  start?: number;
  /** Webhook response timeout for the in-process dispatcher (the spec's 15 s by default). */
  deliveryTimeoutMs?: number;
  /** Listen port (0: any); a test that must know BASE_URL before start picks one with `freePort`. */
  port?: number;
  /**
   * Secrets at rest as `signet serve` has them (secrets/keyring.ts: a key in DATA_DIR on SQLite, SIGNET_SECRET_KEY
   * from `env`); by default none, so tests may build dispatchers of their own and read hook rows as they are.
   */
  secretsAtRest?: boolean;
  /** An existing, empty DATA_DIR (e.g. on a small file system) instead of a new temp folder; removed at close. */
  dataDir?: string;
};

/** A port free right now on 127.0.0.1 (for a BASE_URL that names the harness's own address). */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

const agents = new Map<string, Agent>();
const agentFor = (localAddress?: string): Agent => {
  const k = localAddress ?? '';
  let a = agents.get(k);
  if (!a) {
    a = new Agent({ ...(localAddress ? { localAddress } : {}), keepAliveTimeout: 1000 });
    agents.set(k, a);
  }
  return a;
};

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const clock = new ManualClock(opts.start ?? Date.parse('2026-11-22T10:00:00.000Z'));
  const dir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'signet-test-'));
  let db: Db;
  let dropDb = async () => undefined as void;
  if (!opts.database || opts.database === 'sqlite') {
    db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`);
  } else {
    const pg = await freshPostgres(opts.database.postgresAdminUrl, undefined, opts.database.from);
    db = pg.db;
    dropDb = pg.drop;
  }
  const config = loadConfig({
    DATA_DIR: dir,
    SIGNET_ALLOW_PRIVATE_NETWORK: '1',
    LOG_LEVEL: 'silent',
    // Tests make far more page requests from one loopback address within one manual-clock window than a person
    // would; the per-address limit's own tests set it low.
    PUBLIC_RATE_LIMIT: '1000000',
    ...opts.env,
  });
  const limiter = opts.limiter ? opts.limiter(clock) : createMemoryLimiter({ clock });
  const runtime = await createRuntime(config, {
    api: true,
    worker: true,
    clock,
    db,
    limiter,
    logger: false,
    deliveryTimeoutMs: opts.deliveryTimeoutMs,
    ...(opts.secretsAtRest ? {} : { keyring: null }),
  });
  const app = runtime.app!;
  const listenHost = opts.listenHost ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? 0, host: listenHost });
  const port = (app.server.address() as { port: number }).port;

  const h: Harness = {
    app,
    runtime,
    work: () => runtime.work(),
    db,
    clock,
    config,
    port,
    url: (p, host = listenHost.startsWith('::ffff:') ? '127.0.0.1' : listenHost) =>
      `http://${host.includes(':') ? `[${host}]` : host}:${port}${p}`,
    // As `signet workspace create` does: the deployment's region (if any) is recorded.
    workspace: (tier = 'starter', name = 'Test Workspace') =>
      createWorkspace(db.kysely, { name, tier, region: config.region }, clock.now()),
    async key(workspaceId, o = {}) {
      const r = await createKey(db.kysely, { workspaceId, legacy: !!o.legacy }, clock.now());
      return { id: r.key.id, plaintext: r.plaintext };
    },
    async tenant(tier = 'starter') {
      const ws = await h.workspace(tier);
      const k = await h.key(ws.id);
      return { workspaceId: ws.id, keyId: k.id, token: k.plaintext };
    },
    async request(method, p, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | Buffer | undefined;
      if (o.rawBody !== undefined) body = o.rawBody;
      else if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await undiciRequest(h.url(p, o.host), {
        method: method as never,
        headers,
        body,
        dispatcher: agentFor(o.localAddress),
      });
      const text = await res.body.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const hs: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) hs[k] = Array.isArray(v) ? v.join(', ') : String(v);
      return { status: res.statusCode, headers: hs, text, json };
    },
    async close() {
      const closing = runtime.close();
      // A browser's preconnected socket that never sent a request is not idle to Node: it would hold the close for
      // the server's headersTimeout (60 s). The test is over, so every connection goes.
      app.server.closeAllConnections();
      await closing;
      if (opts.database && opts.database !== 'sqlite') await dropDb();
      else await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
