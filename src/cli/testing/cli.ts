// Fixtures of the `signet` command tests: a data directory, output checks, a `signet serve` child, a hook receiver.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { openDb, type Db } from '../../db/db.js';
import { createKey, findKey } from '../../keys/keys.repo.js';
import { createWorkspace } from '../../workspaces/workspaces.repo.js';
import { runSignet, startServer as startChildServer, type Run } from '../../testing/child-server.js';

/**
 * A fresh data directory for the suite it is called in (made before its tests, removed after), with the test's own
 * connection to the same SQLite file in `db`, for setting up what a test is not about (CLI runs are slow).
 */
export function cliDataDir() {
  const cli = {
    dir: '',
    db: undefined as unknown as Db,
    signet: (args: string[], env: Record<string, string> = {}) => runSignet(cli.dir, args, env),
    seedKey: async (name: string, tier = 'business') => {
      const ws = await createWorkspace(cli.db.kysely, { name, tier }, Date.now());
      const k = await createKey(cli.db.kysely, { workspaceId: ws.id, legacy: false }, Date.now());
      return { ws, id: k.key.id, plaintext: k.plaintext };
    },
    keyRow: async (id: string) => (await findKey(cli.db.kysely, id))!,
  };
  before(async () => {
    cli.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-cli-'));
    cli.db = await openDb(`sqlite:${path.join(cli.dir, 'signet.db')}`);
  });
  after(async () => {
    await cli.db?.close();
    fs.rmSync(cli.dir, { recursive: true, force: true });
  });
  return cli;
}

/** Exactly one JSON object on stdout, nothing on stderr, exit 0. */
export function oneJson(r: Run, label: string): any {
  assert.equal(r.code, 0, `${label}: exit ${r.code}, stderr: ${r.stderr}`);
  assert.equal(r.stderr, '', `${label}: stderr`);
  assert.ok(r.stdout.endsWith('\n'), `${label}: stdout ends with a newline`);
  const lines = r.stdout.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `${label}: exactly one line on stdout, got ${JSON.stringify(r.stdout)}`);
  const v = JSON.parse(lines[0]!);
  assert.ok(v !== null && typeof v === 'object' && !Array.isArray(v), `${label}: a JSON object`);
  return v;
}

/** A failure: non-zero exit, nothing on stdout, exactly one line on stderr (returned). */
export function oneErrorLine(r: Run, label: string): string {
  assert.notEqual(r.code, 0, `${label}: should fail, stdout: ${r.stdout}`);
  assert.equal(r.stdout, '', `${label}: stdout must be empty`);
  assert.ok(r.stderr.endsWith('\n'), `${label}: stderr ends with a newline: ${JSON.stringify(r.stderr)}`);
  const lines = r.stderr.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `${label}: exactly one line on stderr, got ${JSON.stringify(r.stderr)}`);
  assert.ok(lines[0]!.trim().length > 0, `${label}: the line says something`);
  return lines[0]!;
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export type Server = {
  port: number;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  call(
    method: string,
    p: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** `signet serve` as a child on a free loopback port, with helpers to call it and stop it. */
export async function startServer(dataDir: string, args: string[] = []): Promise<Server> {
  const { port, child, exited } = await startChildServer(dataDir, { args });
  const agent = new Agent({ keepAliveTimeout: 500 });
  let stopped: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  return {
    port,
    child,
    exited,
    async call(method, p, token, body) {
      const res = await request(`http://127.0.0.1:${port}${p}`, {
        method: method as never,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: agent,
      });
      const text = await res.body.text();
      return { status: res.statusCode, json: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
    stop() {
      stopped ??= agent.close().then(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        return exited;
      });
      return stopped;
    },
  };
}

type Received = { headers: http.IncomingHttpHeaders; body: string };

/** A webhook receiver on 127.0.0.1 answering each request with the next queued status (200 when none is queued). */
export async function startReceiver() {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    statuses,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function verifySignature(header: string, secret: string, body: string): void {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  assert.ok(m, `signature header ${header}`);
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex');
  assert.equal(m[2], expected, 'v1 is HMAC-SHA256 over `${t}.${body}` with the hook secret');
}

/** Every byte the data directory holds (database, WAL, shared memory, anything else). */
export function dataDirBytes(dir: string): Buffer {
  const out: Buffer[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(fs.readFileSync(p));
    }
  };
  walk(dir);
  return Buffer.concat(out);
}
