// `signet serve` shutdown: SIGTERM stops accepting connections, lets an in-flight API request and an in-flight
// webhook delivery finish (and records the delivery), closes the database and exits 0. The service runs as a real
// child process on a loopback port; the webhook receiver and the slow client are this test's own sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { spawn } from 'node:child_process';
import { BIN, ROOT, baseEnv, signetJson, startServer } from './testing/child-server.js';

/** How long the receiver holds each delivery before answering 200. */
const HOLD_MS = 500;

/** Resolves true once a new TCP connection to the port is refused, false if the deadline passes first. */
async function connectionRefused(port: number, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return true;
    // The listener closes within moments of the signal; poll briefly rather than guess a fixed delay.
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

describe('SIGTERM drains', () => {
  let dir: string;
  let receiver: http.Server;
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  const agent = new Agent({ keepAliveTimeout: 200 });

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-main-'));
  });
  after(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await agent.close();
    if (receiver) {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('an in-flight delivery and an in-flight API request finish, new connections are refused, exit code is 0', async () => {
    const ws = (await signetJson(dir, ['workspace', 'create', '--name', 'Drain', '--tier', 'business'])).workspace;
    const key = await signetJson(dir, ['key', 'create', '--workspace', ws.id]);
    const token: string = key.plaintext;

    // The receiver holds each delivery until the test has sent SIGTERM and at least HOLD_MS, then answers 200;
    // it notes when its response completed.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let seen!: () => void;
    const deliverySeen = new Promise<void>((resolve) => (seen = resolve));
    const deliveries: Array<{ eventId: string; receivedAt: number; finishedAt?: number; aborted?: boolean }> = [];
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const d: (typeof deliveries)[number] = {
          eventId: String(req.headers['x-service-event-id']),
          receivedAt: Date.now(),
        };
        deliveries.push(d);
        res.on('finish', () => (d.finishedAt = Date.now()));
        res.on('close', () => {
          if (!res.writableFinished) d.aborted = true;
        });
        seen();
        const held = new Promise((r) => setTimeout(r, HOLD_MS));
        void Promise.all([held, released]).then(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hook`;

    server = await startServer(dir);
    const { port } = server;
    const api = async (method: string, p: string, body?: unknown) => {
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
      return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
    };

    const hook = await api('POST', '/v1/hooks', { target_url: receiverUrl, events: [] });
    assert.equal(hook.status, 201);

    // A slow client: the request head and half the body now, the rest only after SIGTERM.
    const slowBody = Buffer.from(
      JSON.stringify({ target_url: `${receiverUrl}?slow=1`, events: ['document.completed'] }),
    );
    const slow = net.connect(port, '127.0.0.1');
    const slowResponse = new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      slow.on('data', (d: Buffer) => chunks.push(d));
      slow.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      slow.on('error', reject);
    });
    await new Promise<void>((resolve) => slow.once('connect', resolve));
    slow.write(
      `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${slowBody.length}\r\nConnection: close\r\n\r\n`,
    );
    slow.write(slowBody.subarray(0, 10));

    // The test event goes to the receiver through the server's own worker.
    const queued = await api('POST', `/v1/hooks/${hook.json.id}/test`);
    assert.equal(queued.status, 202);
    await deliverySeen;

    // The delivery is on the wire: stop the service now.
    server.child.kill('SIGTERM');

    // New connections are refused while the drain is still running (the slow request is holding it open).
    assert.ok(await connectionRefused(port, Date.now() + 10_000), 'the listener closed after SIGTERM');
    assert.equal(server.child.exitCode, null, 'still draining while a request and a delivery are in flight');
    release();
    const probe = new Agent({ connect: { timeout: 2_000 } });
    try {
      await assert.rejects(
        request(`http://127.0.0.1:${port}/v1/me`, { dispatcher: probe, headers: { authorization: `Bearer ${token}` } }),
        {
          code: 'ECONNREFUSED',
        },
      );
    } finally {
      await probe.close();
    }

    // The in-flight request completes normally.
    slow.write(slowBody.subarray(10));
    const raw = await slowResponse;
    assert.match(raw, /^HTTP\/1\.1 201 /, raw);
    const created = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.match(created.id, /^hook_/);
    assert.deepEqual(created.events, ['document.completed']);

    const exit = await server.exited;
    assert.equal(exit.signal, null, server.log());
    assert.equal(exit.code, 0, server.log());

    // The receiver's response completed before the process went away, and it was the test event.
    assert.equal(deliveries.length, 1);
    const d = deliveries[0]!;
    assert.equal(d.eventId, queued.json.event_id);
    assert.equal(d.aborted, undefined, 'the delivery connection was not cut');
    assert.ok(d.finishedAt !== undefined, 'the receiver answered');
    assert.ok(d.finishedAt - d.receivedAt >= HOLD_MS - 20, 'd.finishedAt - d.receivedAt >= HOLD_MS - 20');
    assert.ok(d.finishedAt <= exit.at, 'the service waited for the delivery');

    // The outcome was recorded before the database closed.
    const listed = await signetJson(dir, ['deliveries', 'list', '--hook', hook.json.id]);
    assert.equal(listed.deliveries.length, 1);
    const row = listed.deliveries[0];
    assert.equal(row.event_id, queued.json.event_id);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.attempts, 1);
    assert.equal(row.last_status_code, 200);
    assert.equal(row.next_attempt_at, null);
    assert.equal(row.attempts_log.length, 1);
    assert.ok(row.attempts_log[0].duration_ms >= HOLD_MS - 20, `duration ${row.attempts_log[0].duration_ms} ms`);

    // And the slow request's hook was committed.
    const sqlite = new Database(path.join(dir, 'signet.db'), { readonly: true });
    try {
      const stored = sqlite.prepare('select id, workspace_id, events from hooks where id = ?').get(created.id) as
        { id: string; workspace_id: string; events: string } | undefined;
      assert.deepEqual(stored, { id: created.id, workspace_id: ws.id, events: '["document.completed"]' });
    } finally {
      sqlite.close();
    }
  });
});

test('the log never shows a link credential or the provider’s code and state', async () => {
  const { logRequest } = await import('./main.js');
  const token = 'HvFKGUaj_asYHR2VJT0Olfv8v2JypRx9JIYfZhbygFA';
  assert.equal(logRequest({ method: 'GET', url: `/sign/${token}/info` }).url, '/sign/[token]/info');
  assert.equal(logRequest({ method: 'POST', url: `/sign/${token}/qes/start` }).url, '/sign/[token]/qes/start');
  const cb = logRequest({ method: 'GET', url: '/qes/callback?code=c0de&state=st4te' }).url;
  assert.equal(cb, '/qes/callback?[redacted]');
});

describe('signet worker on SQLite', () => {
  test('stays up after it says it runs (nothing but its job loops holds the process), and SIGTERM ends it with 0', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-worker-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const child = spawn(process.execPath, [BIN, 'worker'], {
      cwd: ROOT,
      env: { ...baseEnv(dir), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no 'signet worker running' within 60 s: ${log}`)), 60_000);
      child.stdout.on('data', () => {
        if (log.includes('"msg":"signet worker running"')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then((code) => reject(new Error(`signet worker exited early (${code}): ${log}`)));
    });
    // An empty event loop ends a process within moments of its last callback; a second is far beyond that.
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r('running'), 1_000))]);
    assert.equal(early, 'running', `the worker exited by itself: ${log}`);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, log);
  });
});
