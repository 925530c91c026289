// A database outage seen by a real server: every connection to PostgreSQL goes through a TCP relay the test cuts and
// restores. While it is cut, requests fail fast with the catalogue's 503; once restored, the same process serves
// again without a restart, caches included.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { startHarness, type Harness } from '../testing/harness.js';
import { postgresForTests } from '../testing/services.js';
import { isDatabaseUnavailable } from './db.js';

const pgCheck = await postgresForTests();
const skip = 'skip' in pgCheck ? pgCheck.skip : false;

/** A relay on a fixed loopback port to the real server; `cut()` closes it and every open connection. */
async function relay(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await open();
  return {
    get port() {
      return port;
    },
    get listening() {
      return server?.listening ?? false;
    },
    open,
    async cut() {
      const closed = new Promise<void>((r) => server!.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

test('errors that mean "cannot reach the database now" are told from faults of a statement', () => {
  for (const e of [
    { code: 'ECONNREFUSED' },
    { code: '57P01' },
    { code: '57P03' },
    { code: '08006' },
    { code: '53300' },
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
  ]) {
    assert.ok(isDatabaseUnavailable(e), JSON.stringify(e) || String(e));
  }
  for (const e of [{ code: '23505' }, { code: '42P01' }, new Error('syntax error'), null, 'text', undefined]) {
    assert.ok(!isDatabaseUnavailable(e), String(e));
  }
});

describe('PostgreSQL goes away and comes back under a running server', { skip }, () => {
  let h: Harness;
  let r: Awaited<ReturnType<typeof relay>>;
  before(async () => {
    const target = new URL((pgCheck as { url: string }).url);
    r = await relay(target);
    const via = new URL(target);
    via.port = String(r.port);
    h = await startHarness({ database: { postgresAdminUrl: via.toString() } });
  });
  after(async () => {
    if (!r.listening) await r.open();
    await h.close();
    await r.cut();
  });

  test('503 service_unavailable with Retry-After, fast, during the outage; served again after it', async () => {
    const t = await h.tenant();
    const created = await h.request('POST', '/v1/hooks', {
      token: t.token,
      body: { target_url: 'https://hooks.example.com/in', events: ['document.completed'] },
    });
    assert.equal(created.status, 201, created.text);
    const fresh = await h.tenant(); // a key the caches have never seen
    assert.equal((await h.request('GET', '/v1/hooks', { token: t.token })).status, 200);

    await r.cut();
    await sleep(50);
    const answers: { status: number; code: string; retryAfter: string | undefined; ms: number }[] = [];
    for (const [method, token] of [
      ['GET', fresh.token],
      ['GET', t.token],
      ['POST', t.token],
      ['GET', fresh.token],
    ] as const) {
      const t0 = performance.now();
      const res = await h.request(method, '/v1/hooks', {
        token,
        ...(method === 'POST'
          ? { body: { target_url: 'https://hooks.example.com/two', events: ['document.completed'] } }
          : {}),
      });
      answers.push({
        status: res.status,
        code: res.json?.code,
        retryAfter: res.headers['retry-after'],
        ms: performance.now() - t0,
      });
    }
    for (const a of answers) {
      assert.equal(a.status, 503, JSON.stringify(answers));
      assert.equal(a.code, 'service_unavailable');
      assert.match(a.retryAfter ?? '', /^\d+$/);
      assert.ok(a.ms < 5000, `answered in ${a.ms.toFixed(0)} ms`);
    }
    assert.equal(h.db.probe!.version(), null, 'caches are off while notices are lost');

    await r.open();
    const t0 = performance.now();
    for (;;) {
      const res = await h.request('GET', '/v1/hooks', { token: t.token });
      if (res.status === 200) {
        assert.equal(res.json.length, 1, 'the hook committed before the outage is there');
        break;
      }
      assert.equal(res.status, 503, res.text);
      assert.ok(performance.now() - t0 < 10_000, 'recovered within 10 s');
      await sleep(50);
    }
    assert.equal((await h.request('GET', '/v1/hooks', { token: fresh.token })).status, 200);
    const live = performance.now();
    while (h.db.probe!.version() === null) {
      assert.ok(performance.now() - live < 3000, 'change notices back within 3 s');
      await sleep(20);
    }
  });

  test('a connection held between statements when the server goes away does not end the process', async () => {
    const t = await h.tenant();
    const uncaught: Error[] = [];
    const onUncaught = (err: Error) => uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    try {
      // Held like a transaction holds it: checked out, idle between statements, while the connection is cut.
      const second = await h.db.kysely.connection().execute(async (conn) => {
        await sql`select 1`.execute(conn);
        await r.cut();
        await sleep(200);
        return sql`select 1`.execute(conn).then(
          () => null,
          (err: unknown) => err,
        );
      });
      assert.ok(isDatabaseUnavailable(second), `the next statement fails as unavailable: ${String(second)}`);
      await sleep(100);
      assert.deepEqual(
        uncaught.map((e) => e.message),
        [],
        'no uncaught error',
      );
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      if (!r.listening) await r.open();
    }
    const t0 = performance.now();
    while ((await h.request('GET', '/v1/hooks', { token: t.token })).status !== 200) {
      assert.ok(performance.now() - t0 < 10_000, 'served again within 10 s');
      await sleep(50);
    }
  });
});
