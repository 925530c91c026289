// The SDK against the real server: the app started in-process on a real port (startHarness), a real webhook
// receiver, real sockets for the network failures. The injected `sleep` moves the server's clock instead of waiting.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { makePdf } from '../../src/documents/pdf/testing/fixtures.js';
import { startHarness, type Harness } from '../../src/testing/harness.js';
import {
  Signet,
  SignetError,
  WebhookVerificationError,
  type SignetOptions,
  type SigningRequestCreateParams,
  type SigningRequestSentEvent,
} from '../src/index.js';

type Delivery = { path: string; headers: http.IncomingHttpHeaders; raw: Buffer };

/** A webhook receiver that keeps each delivery's raw bytes and headers. */
async function startReceiver() {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '/', headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    deliveries,
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

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
  let h: Harness;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let pdf: Uint8Array;
  before(async () => {
    h = await startHarness();
    rx = await startReceiver();
    pdf = await makePdf({ pages: 1, text: [['Purchase contract']] });
  });
  after(async () => {
    await rx.close();
    await h.close();
  });

  /** A client for a fresh tenant whose sleep moves the server's clock and is recorded. */
  async function client(opts: Partial<SignetOptions> = {}) {
    const { token, workspaceId } = await h.tenant('business');
    const sleeps: number[] = [];
    const signet = new Signet({
      apiKey: token,
      baseUrl: h.url(''),
      sleep: async (ms) => {
        sleeps.push(ms);
        h.clock.advance(ms);
      },
      ...opts,
    });
    return { signet, sleeps, token, workspaceId };
  }

  const request = (over: Partial<SigningRequestCreateParams> = {}): SigningRequestCreateParams => ({
    signers: [{ role: 'buyer', email: 'ana@example.com', name: 'Ana Pérez' }],
    file: { name: 'contract.pdf', data: pdf },
    placement: 'auto_append',
    title: 'Purchase contract',
    ...over,
  });

  const countDocuments = async (workspaceId: string) =>
    Number(
      (
        await h.db.kysely
          .selectFrom('documents')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('workspace_id', '=', workspaceId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('a signing request with a PDF; its webhook arrives and verifies, and fails verification when tampered', async () => {
    const { signet } = await client();
    const created = await signet.signingRequests.create(request({ callback_url: rx.url('/contract-42') }));
    assert.match(created.document_id, /^doc_/);
    assert.equal(created.signing_requests[0]!.signer.role, 'buyer');
    const secret = created.callback!.secret;
    assert.match(secret, /^whsec_/);

    const doc = await signet.documents.get(created.document_id);
    assert.equal(doc.status, 'in_progress');
    const sr = await signet.signingRequests.get(created.signing_requests[0]!.id);
    assert.equal(sr.status, 'pending');

    await h.work();
    const d = rx.deliveries.find((x) => x.path === '/contract-42');
    assert.ok(d, 'the delivery arrived');
    const now = new Date(h.clock.now()); // the server's clock signed it
    const event = signet.webhooks.verify(d.raw, d.headers, secret, { now });
    assert.equal(event.event, 'signing_request.sent');
    if (event.event !== 'signing_request.sent') return;
    assert.equal(event.document_id, created.document_id);
    assert.equal(event.signer.email, 'ana@example.com');
    assert.equal(event.event_id, d.headers['x-service-event-id']);
    // The event type names exactly the fields the server sends.
    const declared: Record<keyof SigningRequestSentEvent, true> = {
      event: true,
      event_id: true,
      created_at: true,
      workspace_id: true,
      signing_request_id: true,
      document_id: true,
      signer: true,
      locale: true,
      source: true,
      test: true,
    };
    assert.deepEqual(
      Object.keys(event).sort(),
      Object.keys(declared)
        .filter((k) => k !== 'test')
        .sort(),
    );
    assert.deepEqual(Object.keys(event.signer).sort(), ['email', 'name', 'role', 'slot']);

    // The same delivery, with the body changed by one byte, five minutes and a second later, without its header.
    const changed = Buffer.from(d.raw.toString('utf8').replace('ana@', 'eve@'));
    const refused = (code: string) => (err: unknown) => err instanceof WebhookVerificationError && err.code === code;
    assert.throws(() => signet.webhooks.verify(changed, d.headers, secret, { now }), refused('signature_mismatch'));
    assert.throws(
      () => signet.webhooks.verify(d.raw, d.headers, secret, { now: new Date(h.clock.now() + 301_000) }),
      refused('timestamp_outside_tolerance'),
    );
    const withoutSignature = Object.fromEntries(Object.entries(d.headers).filter(([k]) => !k.endsWith('-signature')));
    assert.throws(
      () => signet.webhooks.verify(d.raw, withoutSignature, secret, { now }),
      refused('no_signature_header'),
    );
    assert.throws(
      () => signet.webhooks.verify(JSON.parse(d.raw.toString()), d.headers, secret, { now }),
      refused('parsed_body'),
    );
    // Another hook's secret does not verify it.
    const hook = await signet.hooks.create({ target_url: rx.url('/other') });
    assert.throws(() => signet.webhooks.verify(d.raw, d.headers, hook.secret, { now }), refused('signature_mismatch'));
  });

  test('the test event of a hook made with hooks.create verifies with its secret', async () => {
    const { signet } = await client();
    const hook = await signet.hooks.create({ target_url: rx.url('/connector'), events: ['signing_request.sent'] });
    const sent = await signet.hooks.test(hook.id);
    await h.work();
    const d = rx.deliveries.find((x) => x.headers['x-service-event-id'] === sent.event_id);
    assert.ok(d, 'the test delivery arrived');
    const event = signet.webhooks.verify(d.raw, new Headers(d.headers as Record<string, string>), hook.secret, {
      now: new Date(h.clock.now()),
    });
    assert.equal(event.event, 'signing_request.sent');
    assert.equal(event.event === 'signing_request.sent' && event.test, true);
    const history = await signet.hooks.deliveries(hook.id, { status: 'succeeded' });
    assert.equal(history[0]?.event_id, sent.event_id);
  });

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

  test('the same Idempotency-Key gives the same resource, created once', async () => {
    const { signet, workspaceId } = await client();
    const body = request();
    const a = await signet.signingRequests.create(body, { idempotencyKey: 'order-42' });
    const b = await signet.signingRequests.create(body, { idempotencyKey: 'order-42' });
    assert.equal(b.document_id, a.document_id);
    assert.deepEqual(b, a);
    assert.equal(await countDocuments(workspaceId), 1);
    // Without a key of its own each call gets a fresh one: a second document.
    const c = await signet.signingRequests.create(body);
    assert.notEqual(c.document_id, a.document_id);
    assert.equal(await countDocuments(workspaceId), 2);
    // Reusing the key with another body is the caller's bug, reported as such.
    await assert.rejects(
      signet.signingRequests.create(request({ title: 'Other' }), { idempotencyKey: 'order-42' }),
      (e: unknown) => e instanceof SignetError && e.status === 422 && e.code === 'idempotency_key_reused',
    );
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

  test('a 4xx is a SignetError with status, code, message, meta and the RateLimit values', async () => {
    const { signet } = await client();
    const missing = await signet.documents.get('doc_missing').catch((e: unknown) => e);
    assert.ok(missing instanceof SignetError, `a SignetError, got ${String(missing)}`);
    assert.ok(missing instanceof Error, 'an Error');
    assert.equal(missing.name, 'SignetError');
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
    assert.equal(missing.message, 'Not found.');
    assert.equal(missing.request, 'GET /v1/documents/{id}');
    // The spec: only 2xx and 429 carry RateLimit headers.
    assert.equal(missing.limit, undefined);
    assert.equal(missing.remaining, undefined);

    const invalid = await signet.hooks.create({ target_url: 'ftp://example.com/hook' }).catch((e: unknown) => e);
    assert.ok(invalid instanceof SignetError, `a SignetError, got ${String(invalid)}`);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.code, 'invalid_request');
    assert.equal(invalid.meta?.field, 'target_url');
    assert.match(invalid.message, /target_url/);

    await assert.rejects(
      signet.signingRequests.create(request({ placement: 'manual' })),
      (e: unknown) => e instanceof SignetError && e.status === 400 && e.code === 'placement_retired',
    );

    const stranger = new Signet({ apiKey: 'svk_live_' + '0'.repeat(32), baseUrl: h.url('') });
    await assert.rejects(stranger.me(), (e: unknown) => e instanceof SignetError && e.code === 'invalid_key');
    const me = await signet.me();
    assert.equal(me.tier, 'business');
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
