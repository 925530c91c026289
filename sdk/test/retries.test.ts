// The SDK's waits and retries against the real server (its injected `sleep` moves the server's clock, never waits).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { Signet, SignetError } from '../src/index.js';
import { client, countDocuments, h, pdf, request, rx, useRealServer } from './testing/server.js';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * A TCP proxy to the app that, on its first `lose` connections, passes the request on and then resets the client's
 * connection instead of passing the answer back: the request ran, its answer never arrived.
 */
async function startLossyProxy(targetPort: number, lose: number) {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const n = ++connections;
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.pipe(upstream);
    if (n <= lose) upstream.once('data', () => (client.resetAndDestroy(), upstream.destroy()));
    else upstream.pipe(client);
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * An HTTP proxy to the app that answers its first `refuse` requests itself with the catalogue's 503
 * `service_unavailable` and `Retry-After: 2` (as the service does while its database is away), then passes requests on.
 */
async function startUnavailableProxy(targetPort: number, refuse: number) {
  let seen = 0;
  const server = http.createServer((req, res) => {
    if (++seen <= refuse) {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
      res.end(JSON.stringify({ code: 'service_unavailable', message: 'The service is unavailable right now.' }));
      return;
    }
    const up = http.request(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    seen: () => seen,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('@signet/sdk against the real server', () => {
  useRealServer();

  test('over the rate limit the call waits Retry-After (the clock moves) and then succeeds', async () => {
    const { signet, sleeps, token } = await client();
    for (let i = 0; i < 60; i++) await signet.hooks.list();
    assert.deepEqual(sleeps, [], '60 calls fit in the window');

    // Without retries the 429 surfaces with the RateLimit values (a refused call is not counted).
    const strict = new Signet({ apiKey: token, baseUrl: h.url(''), maxRetries: 0 });
    const err: unknown = await strict.hooks.list().then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof SignetError, `a SignetError, got ${String(err)}`);
    assert.equal(err.status, 429);
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.limit, 60);
    assert.equal(err.remaining, 0);
    assert.ok(err.reset! > 0 && err.reset! <= 60, `reset ${err.reset}`);
    assert.equal(err.retryAfter, err.reset);

    const hooks = await signet.hooks.list();
    assert.deepEqual(hooks, []);
    assert.equal(sleeps.length, 1, `one wait: ${sleeps}`);
    assert.equal(sleeps[0], err.retryAfter! * 1000);
  });

  test('409 idempotency_in_progress: the duplicate waits Retry-After and gets the first call’s answer', async () => {
    // The first call hangs while the server fetches its file_url, holding the Idempotency-Key.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let fetched!: () => void;
    const fileRequested = new Promise<void>((r) => (fetched = r));
    const files = http.createServer(async (_req, res) => {
      fetched();
      await released;
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from(pdf));
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    try {
      const { signet, token, workspaceId } = await client();
      const body = request({
        file: undefined,
        file_url: `http://127.0.0.1:${(files.address() as net.AddressInfo).port}/contract.pdf`,
      });
      const first = signet.signingRequests.create(body, { idempotencyKey: 'slow-1' });
      await fileRequested;

      const strict = new Signet({ apiKey: token, baseUrl: h.url(''), maxRetries: 0 });
      const err: unknown = await strict.signingRequests.create(body, { idempotencyKey: 'slow-1' }).catch((e) => e);
      assert.ok(err instanceof SignetError, `a SignetError, got ${String(err)}`);
      assert.equal(err.status, 409);
      assert.equal(err.code, 'idempotency_in_progress');
      assert.ok(err.retryAfter! > 0, `retryAfter ${err.retryAfter}`);

      const waits: number[] = [];
      const patient = new Signet({
        apiKey: token,
        baseUrl: h.url(''),
        // Instead of waiting Retry-After seconds, let the first call finish.
        sleep: async (ms) => {
          waits.push(ms);
          release();
          await first;
        },
      });
      const second = await patient.signingRequests.create(body, { idempotencyKey: 'slow-1' });
      assert.equal(waits.length, 1);
      assert.equal(waits[0], err.retryAfter! * 1000);
      assert.equal(second.document_id, (await first).document_id);
      assert.equal(await countDocuments(workspaceId), 1);
    } finally {
      release();
      await new Promise<void>((r) => files.close(() => r()));
    }
  });

  test('no answer: GET and DELETE and keyed POSTs are retried with backoff, a POST without a key is not', async () => {
    const port = await closedPort();
    const attempts: string[] = [];
    const sleeps: number[] = [];
    const signet = new Signet({
      apiKey: 'svk_live_' + '0'.repeat(32),
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 3,
      fetch: (input, init) => (attempts.push(String(init?.method)), fetch(input, init)),
      sleep: async (ms) => void sleeps.push(ms),
    });
    const failure = (retried: boolean) => (e: unknown) =>
      e instanceof SignetError &&
      e.status === 0 &&
      e.code === 'connection_error' &&
      /ECONNREFUSED/.test(e.message) &&
      (retried ? /after 4 attempts/ : /not retried/).test(e.message);

    for (const call of [
      () => signet.documents.get('doc_1'),
      () => signet.hooks.delete('hook_1'),
      () => signet.hooks.create({ target_url: 'https://example.com/h' }),
      () => signet.hooks.create({ target_url: 'https://example.com/h' }, { idempotencyKey: 'mine' }),
    ]) {
      attempts.length = sleeps.length = 0;
      await assert.rejects(call(), failure(true));
      assert.equal(attempts.length, 4);
      assert.equal(sleeps.length, 3);
      assert.ok(sleeps[0]! >= 250 && sleeps[0]! <= 500, `first backoff ${sleeps[0]}`);
      assert.ok(sleeps[2]! >= 1000 && sleeps[2]! <= 2000, `third backoff ${sleeps[2]}`);
    }

    attempts.length = sleeps.length = 0;
    await assert.rejects(
      signet.hooks.create({ target_url: 'https://example.com/h' }, { idempotencyKey: null }),
      failure(false),
    );
    assert.deepEqual(attempts, ['POST']);
    assert.deepEqual(sleeps, []);
  });

  test('503 with Retry-After: idempotent calls wait and retry, a POST without a key does not', async () => {
    const { token } = await h.tenant('business');
    const proxy = await startUnavailableProxy(h.port, 1);
    const sleeps: number[] = [];
    const signet = new Signet({ apiKey: token, baseUrl: proxy.url, sleep: async (ms) => void sleeps.push(ms) });
    try {
      assert.ok(Array.isArray(await signet.hooks.list()), 'the GET succeeded on its retry');
      assert.deepEqual(sleeps, [2000], 'after Retry-After');
      const keyed = await startUnavailableProxy(h.port, 1);
      const viaKeyed = new Signet({ apiKey: token, baseUrl: keyed.url, sleep: async () => undefined });
      const hook = await viaKeyed.hooks.create({ target_url: 'https://hooks.example.com/503' });
      assert.match(hook.id, /^hook_/);
      assert.equal(keyed.seen(), 2, 'a POST with its Idempotency-Key is retried');
      await keyed.close();

      const refusing = await startUnavailableProxy(h.port, 1);
      const once = new Signet({ apiKey: token, baseUrl: refusing.url, sleep: async () => undefined });
      await assert.rejects(
        once.hooks.create({ target_url: 'https://hooks.example.com/nokey' }, { idempotencyKey: null }),
        (e: unknown) => e instanceof SignetError && e.status === 503 && e.code === 'service_unavailable',
      );
      assert.equal(refusing.seen(), 1, 'not retried');
      await refusing.close();
    } finally {
      await proxy.close();
    }
  });

  test('an aborted signal stops the retries', async () => {
    const port = await closedPort();
    const controller = new AbortController();
    let attempts = 0;
    const signet = new Signet({
      apiKey: 'svk_live_' + '0'.repeat(32),
      baseUrl: `http://127.0.0.1:${port}`,
      fetch: (input, init) => (attempts++, fetch(input, init)),
      sleep: async () => controller.abort(),
    });
    await assert.rejects(signet.documents.get('doc_1', { signal: controller.signal }), { name: 'AbortError' });
    assert.equal(attempts, 1);
  });

  test('a reset after the server ran a keyed POST: the retry is replayed, not run twice', async () => {
    const { token } = await client();
    const proxy = await startLossyProxy(h.port, 1);
    try {
      const signet = new Signet({ apiKey: token, baseUrl: proxy.url, sleep: async () => undefined });
      const hook = await signet.hooks.create({ target_url: rx.url('/once') });
      assert.equal(proxy.connections(), 2, 'the first answer was lost, the retry got one');
      const hooks = await signet.hooks.list();
      assert.deepEqual(
        hooks.map((x) => x.id),
        [hook.id],
      );
    } finally {
      await proxy.close();
    }

    // Without a key the same loss is not retried, because the server may have run it; here it did.
    const lossy = await startLossyProxy(h.port, 1);
    try {
      const signet = new Signet({ apiKey: token, baseUrl: lossy.url, sleep: async () => undefined });
      await assert.rejects(
        signet.hooks.create({ target_url: rx.url('/twice') }, { idempotencyKey: null }),
        (e: unknown) => e instanceof SignetError && e.code === 'connection_error' && /not retried/.test(e.message),
      );
      assert.equal(lossy.connections(), 1);
    } finally {
      await lossy.close();
    }
    const direct = new Signet({ apiKey: token, baseUrl: h.url('') });
    assert.equal((await direct.hooks.list()).filter((x) => x.target_url === rx.url('/twice')).length, 1);
  });
});
