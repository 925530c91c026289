// What the fault tests share: a cluster of their own (scripts/cluster.sh in a fresh folder and port range), the CLI
// against its database, an HTTP client with latency, and a webhook receiver that records every delivery. Traffic
// goes to 127.0.0.1 only; every loop in the tests is bounded.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { DELIVERY_LEASE_MIN_MS } from '../src/limits.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

export type Member = 'api1' | 'api2' | 'worker1' | 'worker2' | 'redis' | 'pg' | 'haproxy';

export type Cluster = {
  dir: string;
  /** HAProxy's frontend. */
  lb: string;
  api1: string;
  api2: string;
  databaseUrl: string;
  sh(...args: string[]): Promise<string>;
  stop(m: Member): Promise<string>;
  start(m: Member): Promise<string>;
  kill9(m: Member): Promise<string>;
  pid(m: Member): number | null;
  /** One read of the cluster's database (a connection of its own). */
  query<R>(text: string, values?: unknown[]): Promise<R[]>;
  /** The CLI against the cluster's database, `--json` added; its parsed output. */
  cli(...args: string[]): Promise<Record<string, any>>;
  /** A workspace (business tier) and a key with the given per-key limit (the default 60 if none). */
  tenant(limit?: number): Promise<{ workspaceId: string; keyId: string; token: string }>;
  down(): Promise<void>;
};

export async function startCluster(portBase: number): Promise<Cluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-cluster-'));
  // The shortest delivery lease: a killed worker's claims come back after 20 s of real time, not the default 60 s.
  const env = {
    ...process.env,
    CLUSTER_DIR: dir,
    CLUSTER_PORT_BASE: String(portBase),
    LOG_LEVEL: 'info',
    DELIVERY_LEASE_MS: String(DELIVERY_LEASE_MIN_MS),
  };
  const sh = async (...args: string[]) =>
    (await run('bash', [path.join(ROOT, 'scripts/cluster.sh'), ...args], { env, timeout: 180_000 })).stdout;
  await sh('down'); // leftovers of an interrupted run on these ports
  // Anything else on these ports (another run's cluster) would answer for ours and spoil every count.
  const busy = await busyPorts([portBase, portBase + 1, portBase + 2, portBase + 10, portBase + 11]);
  if (busy.length) throw new Error(`ports ${busy.join(', ')} are in use; set CLUSTER_PORT_BASE to a free range`);
  try {
    await sh('up');
  } catch (err) {
    await sh('down').catch(() => undefined);
    throw err;
  }
  const databaseUrl = `postgres://postgres@127.0.0.1:${portBase + 10}/signet`;
  // Asynchronous, so that the event loop keeps running (and sees connections closing) while the CLI works.
  const cli = async (...args: string[]) =>
    JSON.parse(
      (
        await run(process.execPath, [path.join(ROOT, 'bin/signet.js'), ...args, '--json'], {
          env: { ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' },
        })
      ).stdout,
    );
  const c: Cluster = {
    dir,
    lb: `http://127.0.0.1:${portBase}`,
    api1: `http://127.0.0.1:${portBase + 1}`,
    api2: `http://127.0.0.1:${portBase + 2}`,
    databaseUrl,
    sh,
    stop: (m) => sh('stop', m),
    start: (m) => sh('start', m),
    kill9: (m) => sh('kill9', m),
    pid(m) {
      try {
        return Number(fs.readFileSync(path.join(dir, `${m}.pid`), 'utf8').trim());
      } catch {
        return null;
      }
    },
    cli,
    async query<R>(text: string, values?: unknown[]) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return (await client.query(text, values)).rows as R[];
      } finally {
        await client.end();
      }
    },
    async tenant(limit) {
      const ws = (await cli('workspace', 'create', '--name', 'Faults', '--tier', 'business')).workspace;
      const key = await cli('key', 'create', '--workspace', ws.id);
      if (limit !== undefined) await cli('key', 'set-limit', key.key.id, String(limit));
      return { workspaceId: ws.id, keyId: key.key.id, token: key.plaintext };
    },
    async down() {
      await sh('down');
      if (!process.env.CLUSTER_KEEP) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return c;
}

async function busyPorts(ports: number[]): Promise<number[]> {
  const taken = await Promise.all(
    ports.map(
      (port) =>
        new Promise<boolean>((resolve) => {
          const srv = net.createServer();
          srv.once('error', () => resolve(true));
          srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(false)));
        }),
    ),
  );
  return ports.filter((_, i) => taken[i]);
}

export type Res = {
  status: number;
  json: any;
  headers: http.IncomingHttpHeaders;
  ms: number;
  error?: string;
};

// Idle connections are closed here well before HAProxy's keep-alive timeout (10 s) closes them from its side, so a
// request never goes out on a connection the proxy is closing at that moment.
const defaultAgent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4000 });

type RequestOptions = {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  agent?: http.Agent;
  timeoutMs?: number;
};

/** One request; never throws: a network failure is status 0 with `error`. */
export function request(method: string, url: string, o: RequestOptions = {}): Promise<Res> {
  const body = o.body === undefined ? undefined : JSON.stringify(o.body);
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method,
        agent: o.agent ?? defaultAgent,
        headers: {
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...o.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json, headers: res.headers, ms: performance.now() - t0 });
        });
        res.on('error', (e) =>
          resolve({ status: 0, json: null, headers: {}, ms: performance.now() - t0, error: e.message }),
        );
      },
    );
    req.setTimeout(o.timeoutMs ?? 30_000, () => req.destroy(new Error('client timeout')));
    req.on('error', (e) =>
      resolve({
        status: 0,
        json: null,
        headers: {},
        ms: performance.now() - t0,
        error: e.message,
      }),
    );
    req.end(body);
  });
}

/** Runs `f` `n` times with at most `concurrency` at once; the results in order. */
export async function pool<T>(n: number, concurrency: number, f: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await f(i);
      }
    }),
  );
  return out;
}

export const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

export type Delivery = { path: string; eventId: string; at: number };

/**
 * A webhook receiver on 127.0.0.1 recording every delivery (path, event id, arrival time); each answer waits
 * `delayMs` (per path when a function), so deliveries stay in flight for a while.
 */
export async function startReceiver(o: { delayMs?: number | ((path: string) => number) } = {}) {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      deliveries.push({ path, eventId: String(req.headers['x-service-event-id']), at });
      const delay = typeof o.delayMs === 'function' ? o.delayMs(path) : (o.delayMs ?? 0);
      setTimeout(() => res.writeHead(200).end('ok'), delay);
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    deliveries,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Polls `f` every `everyMs` until it is true; how long it took, or throws after `limitMs`. */
export async function until(limitMs: number, what: string, f: () => boolean | Promise<boolean>, everyMs = 50) {
  const t0 = performance.now();
  for (;;) {
    if (await f()) return performance.now() - t0;
    if (performance.now() - t0 > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(everyMs);
  }
}
