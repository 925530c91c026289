import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness, type HarnessOptions } from '../testing/harness.js';
import { postgresForTests } from '../testing/services.js';
import { beginIdempotent } from './idempotency.repo.js';
import { sha256Hex } from '../lib/crypto.js';
import { setRateLimit } from '../keys/keys.repo.js';

const countHooks = (h: Harness, ws: string) =>
  h.db.kysely
    .selectFrom('hooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', ws)
    .executeTakeFirstOrThrow()
    .then((r) => Number(r.n));

function idempotencySuite(name: string, opts: HarnessOptions, skip: string | false = false) {
  describe(name, { skip }, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(opts);
    });
    after(() => h?.close());

    const hookBody = { target_url: 'http://127.0.0.1:9/hook', events: ['document.completed'] };

    test('a repeated POST replays the stored response and creates nothing new', async () => {
      const t = await h.tenant();
      const headers = { 'idempotency-key': 'create-hook-1' };
      const first = await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers });
      assert.equal(first.status, 201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const again = await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.text, first.text, 'byte-identical body, secret included');
      assert.match(again.headers['content-type']!, /application\/json/);
      assert.equal(await countHooks(h, t.workspaceId), 1);
    });

    test('the stored reply is sealed under the API key: the secret shown once is not in the database', async () => {
      const t = await h.tenant();
      const headers = { 'idempotency-key': 'sealed-reply' };
      const first = await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers });
      assert.equal(first.status, 201);
      const row = await h.db.kysely
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('idem_key', '=', 'sealed-reply')
        .executeTakeFirstOrThrow();
      assert.ok(!row.response_body!.includes(first.json.secret), 'the hook secret is not stored in clear');
      assert.ok(!row.response_body!.includes(first.json.id), 'nothing of the reply is stored in clear');
      assert.match(row.response_body!, /^enc1:[A-Za-z0-9+/]+=*$/);
      const again = await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers });
      assert.equal(again.text, first.text);
    });

    test('the same key with a different body or path is 422 idempotency_key_reused', async () => {
      const t = await h.tenant();
      const headers = { 'idempotency-key': 'reuse-me' };
      assert.equal((await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers })).status, 201);
      const other = await h.request('POST', '/v1/hooks', {
        token: t.token,
        body: { ...hookBody, events: [] },
        headers,
      });
      assert.equal(other.status, 422);
      assert.equal(other.json.code, 'idempotency_key_reused');
      const otherPath = await h.request('DELETE', '/v1/hooks/hook_x', { token: t.token, headers });
      assert.equal(otherPath.status, 422);
      assert.equal(await countHooks(h, t.workspaceId), 1);
    });

    test('4xx outcomes are stored and replayed; keys are scoped per API key', async () => {
      const t = await h.tenant();
      const headers = { 'idempotency-key': 'bad-events' };
      const bad = { target_url: 'http://127.0.0.1:9/hook', events: ['no.such.event'] };
      const r1 = await h.request('POST', '/v1/hooks', { token: t.token, body: bad, headers });
      assert.equal(r1.status, 400);
      const r2 = await h.request('POST', '/v1/hooks', { token: t.token, body: bad, headers });
      assert.equal(r2.status, 400);
      assert.equal(r2.headers['idempotent-replayed'], 'true');
      assert.equal(r2.text, r1.text);
      const second = await h.key(t.workspaceId);
      const r3 = await h.request('POST', '/v1/hooks', { token: second.plaintext, body: hookBody, headers });
      assert.equal(r3.status, 201, 'another API key has its own key space');
    });

    test('a concurrent duplicate is 409 idempotency_in_progress with Retry-After', async () => {
      const t = await h.tenant();
      const raw = JSON.stringify(hookBody);
      // An in-flight holder of the key (a request still inside its handler on another instance).
      const held = await beginIdempotent(
        h.db.kysely,
        { keyId: t.keyId, idemKey: 'in-flight', fingerprint: sha256Hex(`POST /v1/hooks\n${raw}`) },
        h.clock.now(),
        { lockMs: 30_000, ttlMs: 86_400_000 },
      );
      assert.equal(held.kind, 'acquired');
      h.clock.advance(10_200);
      const r = await h.request('POST', '/v1/hooks', {
        token: t.token,
        rawBody: raw,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'in-flight' },
      });
      assert.equal(r.status, 409);
      assert.equal(r.json.code, 'idempotency_in_progress');
      assert.equal(r.headers['retry-after'], '20');
      assert.ok(!('ratelimit-limit' in r.headers), '409 carries no RateLimit headers');
      assert.equal(await countHooks(h, t.workspaceId), 0);
      // A holder that died: after its lock lapses the key can be taken over and the request runs once.
      h.clock.advance(20_000);
      const late = await h.request('POST', '/v1/hooks', {
        token: t.token,
        rawBody: raw,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'in-flight' },
      });
      assert.equal(late.status, 201);
      assert.equal(await countHooks(h, t.workspaceId), 1);
    });

    test('parallel identical requests run the handler once', async () => {
      const t = await h.tenant();
      await setRateLimit(h.db.kysely, t.keyId, 10_000);
      const headers = { 'idempotency-key': 'race' };
      const results = await Promise.all(
        Array.from({ length: 25 }, () => h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers })),
      );
      const fresh = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
      const replays = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === 'true');
      const busy = results.filter((r) => r.status === 409);
      assert.equal(fresh.length, 1);
      assert.equal(fresh.length + replays.length + busy.length, 25);
      for (const r of busy) {
        assert.equal(r.json.code, 'idempotency_in_progress');
        assert.match(r.headers['retry-after']!, /^\d+$/);
      }
      for (const r of replays) assert.equal(r.json.id, fresh[0]!.json.id);
      assert.equal(await countHooks(h, t.workspaceId), 1);
    });

    test('DELETE is idempotent under a key; keys expire after 24 hours', async () => {
      const t = await h.tenant();
      const created = await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody });
      const headers = { 'idempotency-key': 'del-1' };
      const d1 = await h.request('DELETE', `/v1/hooks/${created.json.id}`, { token: t.token, headers });
      assert.equal(d1.status, 204);
      const d2 = await h.request('DELETE', `/v1/hooks/${created.json.id}`, { token: t.token, headers });
      assert.equal(d2.status, 204);
      assert.equal(d2.headers['idempotent-replayed'], 'true');
      const plain = await h.request('DELETE', `/v1/hooks/${created.json.id}`, { token: t.token });
      assert.equal(plain.status, 404);
      const k = { 'idempotency-key': 'day-old' };
      const a = await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers: k });
      h.clock.advance(24 * 3600 * 1000 - 1);
      assert.equal(
        (await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers: k })).json.id,
        a.json.id,
      );
      h.clock.advance(1);
      const b = await h.request('POST', '/v1/hooks', { token: t.token, body: hookBody, headers: k });
      assert.equal(b.status, 201);
      assert.notEqual(b.json.id, a.json.id, 'an expired key runs the request again');
    });

    test('malformed Idempotency-Key values are 400 invalid_request', async () => {
      const t = await h.tenant();
      for (const v of ['x'.repeat(256), 'has space', 'tab\there']) {
        const r = await h.request('POST', '/v1/hooks', {
          token: t.token,
          body: hookBody,
          headers: { 'idempotency-key': v },
        });
        assert.equal(r.status, 400, v);
        assert.equal(r.json.code, 'invalid_request');
      }
      assert.equal(await countHooks(h, t.workspaceId), 0);
      const ok = await h.request('POST', '/v1/hooks', {
        token: t.token,
        body: hookBody,
        headers: { 'idempotency-key': 'k'.repeat(255) },
      });
      assert.equal(ok.status, 201);
    });
  });
}

idempotencySuite('idempotency (SQLite)', {});
const pg = await postgresForTests();
idempotencySuite(
  'idempotency (PostgreSQL)',
  'url' in pg ? { database: { postgresAdminUrl: pg.url } } : {},
  'skip' in pg ? pg.skip : false,
);
