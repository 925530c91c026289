// The limiter as a caller sees it: through the real app, headers and bodies exactly as the spec's Limits section.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../testing/harness.js';
import { createRedisLimiter, type RedisLimiter } from './redis-store.js';
import type { ManualClock } from '../lib/clock.js';
import { redisForTests, redisTestPrefix } from '../testing/services.js';

const RL = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'];
const hasNoRateHeaders = (h: Record<string, string>) => RL.every((n) => !(n in h));

function rateLimitSuite(name: string, make: () => Promise<Harness>, skip: string | false = false) {
  describe(name, { skip }, () => {
    let h: Harness;
    before(async () => {
      h = await make();
    });
    after(() => h?.close());

    test('60 admitted with Remaining counting down, the 61st is 429 with Retry-After, and the window reopens', async () => {
      const t = await h.tenant();
      const start = h.clock.now();
      for (let i = 1; i <= 60; i++) {
        const r = await h.request('GET', '/v1/hooks', { token: t.token });
        assert.equal(r.status, 200);
        assert.equal(r.headers['ratelimit-limit'], '60');
        assert.equal(r.headers['ratelimit-remaining'], String(60 - i));
        assert.equal(r.headers['ratelimit-reset'], '60');
        assert.equal(r.headers['ratelimit-policy'], '60;w=60');
      }
      h.clock.advance(20_500);
      const over = await h.request('GET', '/v1/hooks', { token: t.token });
      assert.equal(over.status, 429);
      assert.deepEqual(over.json, { error: over.json.error, code: 'rate_limited' });
      assert.equal(over.headers['retry-after'], '40');
      assert.equal(over.headers['ratelimit-remaining'], '0');
      assert.equal(over.headers['ratelimit-reset'], '40');
      assert.equal(over.headers['ratelimit-limit'], '60');
      assert.equal(over.headers['ratelimit-policy'], '60;w=60');
      // Refused requests do not count: the next window gives a full 60 again.
      for (let i = 0; i < 5; i++) assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 429);
      h.clock.set(start + 59_999);
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).headers['retry-after'], '1');
      h.clock.set(start + 60_000);
      const fresh = await h.request('GET', '/v1/hooks', { token: t.token });
      assert.equal(fresh.status, 200);
      assert.equal(fresh.headers['ratelimit-remaining'], '59');
      assert.equal(fresh.headers['ratelimit-reset'], '60');
    });

    test('404s and validation errors count but carry no RateLimit headers; /v1/me never counts', async () => {
      const t = await h.tenant();
      for (let i = 0; i < 10; i++) {
        const me = await h.request('GET', '/v1/me', { token: t.token });
        assert.equal(me.status, 200);
        assert.ok(hasNoRateHeaders(me.headers), 'hasNoRateHeaders(me.headers)');
      }
      const nf = await h.request('GET', '/v1/nope', { token: t.token });
      assert.equal(nf.status, 404);
      assert.equal(nf.json.code, 'not_found');
      assert.ok(hasNoRateHeaders(nf.headers), 'hasNoRateHeaders(nf.headers)');
      const bad = await h.request('POST', '/v1/hooks', { token: t.token, body: { target_url: 42 } });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.code, 'invalid_request');
      assert.ok(hasNoRateHeaders(bad.headers), 'hasNoRateHeaders(bad.headers)');
      const gone = await h.request('DELETE', '/v1/hooks/hook_missing', { token: t.token });
      assert.equal(gone.status, 404);
      const ok = await h.request('GET', '/v1/hooks', { token: t.token });
      assert.equal(ok.headers['ratelimit-remaining'], '56', '3 counted requests before this one, /v1/me none');
      h.clock.advance(61_000);
      // With the bucket exhausted, /v1/me still answers, without headers.
      for (let i = 0; i < 60; i++) await h.request('GET', '/v1/nope', { token: t.token });
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 429);
      const me = await h.request('GET', '/v1/me', { token: t.token });
      assert.equal(me.status, 200);
      assert.ok(hasNoRateHeaders(me.headers), 'hasNoRateHeaders(me.headers)');
    });

    test('two keys of one workspace have separate buckets', async () => {
      const t = await h.tenant();
      const other = await h.key(t.workspaceId);
      for (let i = 0; i < 60; i++) await h.request('GET', '/v1/hooks', { token: t.token });
      assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 429);
      const r = await h.request('GET', '/v1/hooks', { token: other.plaintext });
      assert.equal(r.status, 200);
      assert.equal(r.headers['ratelimit-remaining'], '59');
    });

    test('a 429 does not consume the Idempotency-Key: the same key succeeds on retry', async () => {
      const t = await h.tenant();
      for (let i = 0; i < 60; i++) await h.request('GET', '/v1/hooks', { token: t.token });
      const body = { target_url: 'http://127.0.0.1:9/hook', events: [] };
      const headers = { 'idempotency-key': 'retry-after-429' };
      const refused = await h.request('POST', '/v1/hooks', { token: t.token, body, headers });
      assert.equal(refused.status, 429);
      h.clock.advance(60_000);
      const created = await h.request('POST', '/v1/hooks', { token: t.token, body, headers });
      assert.equal(created.status, 201);
      assert.equal(created.headers['idempotent-replayed'], undefined);
      assert.equal(created.headers['ratelimit-remaining'], '59');
      const replay = await h.request('POST', '/v1/hooks', { token: t.token, body, headers });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json.id, created.json.id);
      assert.equal(replay.headers['ratelimit-remaining'], '58', 'a replay is an admitted request');
    });
  });
}

rateLimitSuite('rate limit over HTTP (in-process store)', () => startHarness());

const redis = await redisForTests();

/**
 * The app on a Redis limiter that is connected before the first request: on a loaded machine the app's start-up can
 * outlast the limiter's bounded boot wait, and the first hits would then be counted per instance (as designed), not in
 * Redis. A long command timeout keeps a starved moment from opening the breaker mid-test (outage.test covers that).
 */
async function redisHarness(prefix: string, clockOf: (own: ManualClock) => ManualClock = (own) => own) {
  let made: RedisLimiter | undefined;
  const url = (redis as { url: string }).url;
  const h = await startHarness({
    limiter: (own) => (made = createRedisLimiter({ url, clock: clockOf(own), prefix, commandTimeoutMs: 10_000 })),
  });
  assert.ok(await made!.connected(10_000), 'the limiter connects to Redis');
  return h;
}

rateLimitSuite(
  'rate limit over HTTP (Redis store)',
  () => redisHarness(redisTestPrefix()),
  'skip' in redis ? redis.skip : false,
);

describe('two instances share one Redis bucket', { skip: 'skip' in redis ? redis.skip : false }, () => {
  test('requests spread over two app instances count against one 60/60 bucket', async () => {
    const prefix = redisTestPrefix();
    const a = await redisHarness(prefix);
    const b = await redisHarness(prefix, () => a.clock);
    try {
      // One key row in each instance's own database with the same id is what two instances on one PostgreSQL see;
      // here both databases get the same key so the shared Redis bucket (keyed by key id) is exercised.
      const t = await a.tenant();
      const row = await a.db.kysely
        .selectFrom('api_keys')
        .selectAll()
        .where('id', '=', t.keyId)
        .executeTakeFirstOrThrow();
      const ws = await a.db.kysely
        .selectFrom('workspaces')
        .selectAll()
        .where('id', '=', t.workspaceId)
        .executeTakeFirstOrThrow();
      await b.db.kysely.insertInto('workspaces').values(ws).execute();
      await b.db.kysely.insertInto('api_keys').values(row).execute();
      const statuses: number[] = [];
      for (let i = 0; i < 61; i++)
        statuses.push((await (i % 2 ? a : b).request('GET', '/v1/hooks', { token: t.token })).status);
      assert.deepEqual(statuses.slice(0, 60), Array(60).fill(200));
      assert.equal(statuses[60], 429);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
