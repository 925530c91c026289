import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import Fastify from 'fastify';
import { Type } from 'typebox';
import Stripe from 'stripe';
import { startHarness, type Harness, type Res } from '../testing/harness.js';
import { createDispatcher } from './dispatcher.js';
import { createHook } from './hooks.repo.js';
import { EVENT_NAMES } from './events.js';
import { EVENT_EXAMPLES } from './events.schemas.js';
import { HookView } from './hooks.schemas.js';

type Received = { headers: http.IncomingHttpHeaders; body: string };

async function receiver(status = 200): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const stripe = new Stripe('sk_test_unused');

/** What Fastify's serializer for the route's response schema writes for `views`, on an app of its own. */
async function schemaSerialised(views: unknown): Promise<string> {
  const app = Fastify({ logger: false });
  app.get('/', { schema: { response: { 200: Type.Array(HookView) } } }, async () => views);
  try {
    return (await app.inject('/')).body;
  } finally {
    await app.close();
  }
}

describe('/v1/hooks', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ start: Date.now() });
  });
  after(() => h.close());

  test('a cached list is answered with the same bytes and headers as a freshly read one, and follows every change', async () => {
    const t = await h.tenant();
    const create = (n: number) => {
      h.clock.advance(1); // oldest first: distinct creation times
      return h.request('POST', '/v1/hooks', {
        token: t.token,
        body: { target_url: `https://hooks.example.com/${n}`, events: n ? ['document.completed'] : [] },
      });
    };
    const list = () => h.request('GET', '/v1/hooks', { token: t.token });
    const shape = (r: Res) => ({
      status: r.status,
      text: r.text,
      type: r.headers['content-type'],
      limit: r.headers['ratelimit-limit'],
    });
    const ids = [(await create(0)).json.id, (await create(1)).json.id];
    const fresh = await list(); // the create moved the change probe: read from the database
    assert.ok(h.app.hooks.cachedList(t.workspaceId, h.db.probe!.version()), 'the next list is served from the cache');
    assert.equal(
      fresh.text,
      await schemaSerialised(fresh.json),
      "byte for byte what the route's schema serializer writes",
    );
    const cached = await list();
    assert.deepEqual(shape(cached), shape(fresh));
    assert.deepEqual(shape(await list()), shape(fresh));
    assert.equal(fresh.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(
      fresh.json.map((x: { id: string }) => x.id),
      ids,
    );
    assert.notEqual(Number(cached.headers['ratelimit-remaining']), Number(fresh.headers['ratelimit-remaining']));

    assert.equal((await h.request('DELETE', `/v1/hooks/${ids[0]}`, { token: t.token })).status, 204);
    const after = [await list(), await list()];
    for (const r of after)
      assert.deepEqual(
        r.json.map((x: { id: string }) => x.id),
        [ids[1]],
      );
    assert.equal(after[0]!.text, after[1]!.text);
    await create(2);
    assert.equal((await list()).json.length, 2);
    assert.equal((await list()).json.length, 2);
  });

  test('create returns the secret once; list and later reads never show it', async () => {
    const t = await h.tenant();
    const r = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: {
        target_url: 'https://hooks.example.com/signet',
        events: ['signing_request.signed', 'document.completed', 'document.completed'],
      },
    });
    assert.equal(r.status, 201);
    assert.match(r.json.id, /^hook_[0-9a-f]{24}$/);
    assert.match(r.json.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(r.json.events, ['signing_request.signed', 'document.completed']);
    assert.equal(r.json.target_url, 'https://hooks.example.com/signet');
    assert.equal(r.json.created_at, new Date(h.clock.now()).toISOString());
    assert.ok(r.headers['ratelimit-remaining'], "r.headers['ratelimit-remaining']");
    const list = await h.request('GET', '/v1/hooks', { token: t.token });
    assert.equal(list.status, 200);
    assert.equal(list.json.length, 1);
    assert.deepEqual(Object.keys(list.json[0]).sort(), ['created_at', 'document_id', 'events', 'id', 'target_url']);
    assert.ok(!list.text.includes(r.json.secret), '!list.text.includes(r.json.secret)');
  });

  test('event filter: empty means all, known names only, at most 10', async () => {
    const t = await h.tenant();
    const all = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://x.example/a', events: [] },
    });
    assert.equal(all.status, 201);
    assert.deepEqual(all.json.events, []);
    const none = await h.request('POST', '/v1/hooks', { token: t.token, body: { target_url: 'https://x.example/a' } });
    assert.deepEqual(none.json.events, []);
    const ten = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://x.example/a', events: [...EVENT_NAMES] },
    });
    assert.equal(ten.status, 201, 'all ten catalogue names, placement_expired included');
    const eleven = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://x.example/a', events: [...EVENT_NAMES, 'document.completed2'] },
    });
    assert.equal(eleven.status, 400);
    assert.equal(eleven.json.code, 'invalid_request');
    const unknown = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://x.example/a', events: ['document.done'] },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.meta.field, 'events');
    const list = await h.request('GET', '/v1/hooks', { token: t.token });
    assert.equal(list.json.length, 3, 'refused creations wrote nothing');
  });

  test('target_url must be an http(s) URL without credentials', async () => {
    const t = await h.tenant();
    for (const target_url of [
      'ftp://x.example/a',
      'https://u:p@x.example/a',
      'not a url',
      '/relative',
      'javascript:alert(1)',
      `https://x.example/${'a'.repeat(2100)}`,
    ]) {
      const r = await h.request('POST', '/v1/hooks', { token: t.token, body: { target_url } });
      assert.equal(r.status, 400, target_url);
      assert.equal(r.json.code, 'invalid_request');
    }
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).json.length, 0);
  });

  test("another workspace's hook is 404 on delete, test and deliveries", async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const hook = await h.request('POST', '/v1/hooks', { token: a.token, body: { target_url: 'https://x.example/a' } });
    for (const [m, p] of [
      ['DELETE', `/v1/hooks/${hook.json.id}`],
      ['POST', `/v1/hooks/${hook.json.id}/test`],
      ['GET', `/v1/hooks/${hook.json.id}/deliveries`],
    ] as const) {
      const r = await h.request(m, p, { token: b.token });
      assert.equal(r.status, 404, `${m} ${p}`);
      assert.equal(r.json.code, 'not_found');
    }
    assert.equal((await h.request('GET', '/v1/hooks', { token: b.token })).json.length, 0);
    assert.equal((await h.request('DELETE', `/v1/hooks/${hook.json.id}`, { token: a.token })).status, 204);
    assert.equal((await h.request('DELETE', `/v1/hooks/${hook.json.id}`, { token: a.token })).status, 404);
    assert.equal((await h.request('GET', '/v1/hooks', { token: a.token })).json.length, 0);
  });

  test('the test event reaches a real receiver, signed, and shows in the delivery history', async () => {
    const rx = await receiver();
    try {
      const t = await h.tenant();
      const created = await h.request('POST', '/v1/hooks', {
        token: t.token,
        body: { target_url: rx.url, events: ['document.completed'] },
      });
      const sent = await h.request('POST', `/v1/hooks/${created.json.id}/test`, { token: t.token });
      assert.equal(sent.status, 202);
      assert.match(sent.json.event_id, /^evt_[0-9a-f]{32}$/);
      const d = createDispatcher({ db: h.db, clock: h.clock, workerId: 'test', allowPrivateNetwork: true });
      assert.equal(await d.runOnce(), 1);
      await d.stop();
      assert.equal(rx.got.length, 1);
      const { headers, body } = rx.got[0]!;
      const event = stripe.webhooks.constructEvent(
        body,
        headers['x-service-signature'] as string,
        created.json.secret,
      ) as unknown as Record<string, any>;
      assert.equal(headers['x-legacy-signature'], headers['x-service-signature']);
      assert.equal(headers['x-service-event-id'], sent.json.event_id);
      assert.equal(headers['x-legacy-event-id'], sent.json.event_id);
      assert.equal(headers['x-service-event'], 'signing_request.sent');
      assert.equal(headers['x-legacy-event'], 'signing_request.sent');
      assert.equal(headers['user-agent'], 'service-webhooks/1.0');
      assert.equal(headers['content-type'], 'application/json');
      assert.equal(event.event, 'signing_request.sent');
      assert.equal(event.event_id, sent.json.event_id);
      assert.equal(event.workspace_id, t.workspaceId);
      assert.equal(event.test, true);
      assert.equal(event.signing_request_id, 'req_test_synthetic');
      assert.equal(event.document_id, 'doc_test_synthetic');
      assert.match(event.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const hist = await h.request('GET', `/v1/hooks/${created.json.id}/deliveries`, { token: t.token });
      assert.equal(hist.status, 200);
      assert.equal(hist.json.length, 1);
      assert.equal(hist.json[0].status, 'succeeded');
      assert.equal(hist.json[0].event_id, sent.json.event_id);
      assert.equal(hist.json[0].attempts_log.length, 1);
      assert.equal(hist.json[0].attempts_log[0].status_code, 200);
      assert.ok(!hist.text.includes(created.json.secret), 'history never shows the secret');
    } finally {
      await rx.close();
    }
  });

  test('emit: filters and document-scoped hooks decide which hooks get a delivery', async () => {
    const t = await h.tenant();
    const now = h.clock.now();
    const all = await createHook(
      h.db.kysely,
      { workspaceId: t.workspaceId, targetUrl: 'https://a.example/', events: [], source: 'api' },
      now,
    );
    const onlySigned = await createHook(
      h.db.kysely,
      {
        workspaceId: t.workspaceId,
        targetUrl: 'https://b.example/',
        events: ['signing_request.signed'],
        source: 'api',
      },
      now,
    );
    const docA = await createHook(
      h.db.kysely,
      {
        workspaceId: t.workspaceId,
        targetUrl: 'https://c.example/',
        events: [],
        documentId: 'doc_a',
        source: 'callback',
      },
      now,
    );
    const other = await h.tenant();
    await createHook(
      h.db.kysely,
      { workspaceId: other.workspaceId, targetUrl: 'https://d.example/', events: [], source: 'api' },
      now,
    );
    const targets = async (name: 'signing_request.sent' | 'signing_request.signed', doc: string) => {
      const r = await h.db.kysely
        .transaction()
        .execute((trx) => h.app.emit(trx, name, t.workspaceId, { ...EVENT_EXAMPLES[name], document_id: doc }));
      const rows = await h.db.kysely
        .selectFrom('deliveries')
        .select('hook_id')
        .where('event_id', '=', r.eventId)
        .execute();
      return rows.map((x) => x.hook_id).sort();
    };
    assert.deepEqual(await targets('signing_request.sent', 'doc_a'), [all.id, docA.id].sort());
    assert.deepEqual(await targets('signing_request.signed', 'doc_a'), [all.id, onlySigned.id, docA.id].sort());
    assert.deepEqual(await targets('signing_request.signed', 'doc_b'), [all.id, onlySigned.id].sort());
    // A rolled-back transaction leaves neither the event nor its deliveries.
    const before = await h.db.kysely
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await assert.rejects(
      h.db.kysely.transaction().execute(async (trx) => {
        await h.app.emit(trx, 'signing_request.sent', t.workspaceId, {
          ...EVENT_EXAMPLES['signing_request.sent'],
          document_id: 'doc_a',
        });
        throw new Error('state change failed');
      }),
    );
    const afterCount = await h.db.kysely
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(afterCount.n), Number(before.n));
  });
});

describe('/v1/hooks without SIGNET_ALLOW_PRIVATE_NETWORK', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: { SIGNET_ALLOW_PRIVATE_NETWORK: '0' } });
  });
  after(() => h.close());

  test('loopback, private and link-local targets are refused at registration', async () => {
    const t = await h.tenant();
    for (const target_url of [
      'http://127.0.0.1:8080/x',
      'http://localhost/x',
      'http://10.0.0.5/x',
      'http://[::1]/x',
      'http://169.254.169.254/latest',
      'http://[::ffff:192.168.1.1]/',
    ]) {
      const r = await h.request('POST', '/v1/hooks', { token: t.token, body: { target_url } });
      assert.equal(r.status, 400, target_url);
      assert.equal(r.json.code, 'invalid_request');
      assert.equal(r.json.meta.field, 'target_url');
    }
  });
});
