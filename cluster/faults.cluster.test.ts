// Fault tests on a real local cluster (scripts/cluster.sh): HAProxy in front of two API instances, two workers, one
// PostgreSQL and one Redis of the cluster's own. Each test states and asserts the numbers it names and prints them.
// Run with `npm run test:cluster`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { STALE_AFTER_MS } from '../src/db/pg-change-probe.js';
import { COMMAND_TIMEOUT_MS } from '../src/ratelimit/redis-store.js';
import { percentile, pool, request, startCluster, startReceiver, until, type Cluster, type Res } from './harness.js';

const PORT_BASE = Number(process.env.CLUSTER_PORT_BASE ?? 7800);

describe('scale-out: faults on a local cluster', () => {
  let c: Cluster;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    c = await startCluster(PORT_BASE);
    // Deliveries of the worker-kill test take 100 ms each, so many are on the wire when the worker dies; those of the
    // deletion test 1 s, so that its 300 events cannot all be delivered before the DELETE goes out.
    rx = await startReceiver({ delayMs: (path) => (path === '/h1' ? 100 : path === '/h2' ? 1000 : 20) });
  });
  after(async () => {
    await rx?.close();
    await c?.down();
  });

  test('the same Idempotency-Key sent concurrently to both instances makes one resource', async (t) => {
    const { token } = await c.tenant(1_000_000);
    const key = `idem-${randomBytes(8).toString('hex')}`;
    const body = { target_url: rx.url('/idem'), events: ['document.completed'] };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request('POST', `${i % 2 ? c.api1 : c.api2}/v1/hooks`, { token, body, headers: { 'idempotency-key': key } }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    const busy = answers.filter((a) => a.status === 409);
    t.diagnostic(`20 concurrent: ${created.length} × 201 (one creation, the rest replays), ${busy.length} × 409`);
    assert.equal(created.length + busy.length, 20, JSON.stringify(answers.map((a) => a.status)));
    assert.ok(created.length >= 1, 'one request created the hook');
    assert.equal(new Set(created.map((a) => JSON.stringify(a.json))).size, 1, 'every 201 is the same reply');
    for (const a of busy) assert.equal(a.json.code, 'idempotency_in_progress');
    const list = await request('GET', `${c.lb}/v1/hooks`, { token });
    assert.equal(list.json.filter((h: { target_url: string }) => h.target_url === body.target_url).length, 1);
    const later = await request('POST', `${c.api1}/v1/hooks`, { token, body, headers: { 'idempotency-key': key } });
    assert.equal(later.status, 201);
    assert.equal(later.json.id, created[0]!.json.id, 'a later retry replays the same hook');
  });

  test('a revoked key is refused by both instances within 1 s', async (t) => {
    const { keyId, token } = await c.tenant(1_000_000);
    for (const base of [c.api1, c.api2, c.api1, c.api2]) {
      assert.equal((await request('GET', `${base}/v1/hooks`, { token })).status, 200, 'cached on both');
    }
    const t0 = performance.now();
    await c.cli('key', 'revoke', keyId); // another process: neither instance made the change
    const revokedAt = performance.now();
    const seen: Record<string, number> = {};
    await Promise.all(
      [c.api1, c.api2].map((base) =>
        until(
          1000,
          `${base} refuses the revoked key`,
          async () => {
            const r = await request('GET', `${base}/v1/hooks`, { token });
            if (r.status !== 401) return false;
            seen[base] = performance.now() - revokedAt;
            return true;
          },
          5,
        ),
      ),
    );
    t.diagnostic(
      `CLI revoke took ${(revokedAt - t0).toFixed(0)} ms; refused after it by api1 in ${seen[c.api1]!.toFixed(1)} ms, api2 in ${seen[c.api2]!.toFixed(1)} ms`,
    );
    for (const ms of Object.values(seen)) assert.ok(ms <= 1000, `refused after ${ms.toFixed(0)} ms`);
  });

  /** Waits, if needed, so that the next `n` requests of a fresh key fall inside one 60 s window. */
  async function freshWindow(token: string, needS: number): Promise<Res> {
    const first = await request('GET', `${c.lb}/v1/hooks`, { token });
    assert.equal(first.status, 200, `a fresh key's first request: ${JSON.stringify(first.json)} ${first.error ?? ''}`);
    const reset = Number(first.headers['ratelimit-reset']);
    if (reset < needS) await sleep((reset + 1) * 1000);
    return first;
  }

  test('rate limit through HAProxy: 60 per window across both instances; Redis down: each instance on its own, fast; Redis back: shared again', async (t) => {
    // Redis up: one window, one count.
    const a = await c.tenant();
    await freshWindow(a.token, 15);
    const shared = await pool(99, 6, () => request('GET', `${c.lb}/v1/hooks`, { token: a.token }));
    const admitted = 1 + shared.filter((r) => r.status === 200).length; // freshWindow's request was admitted too
    const servedBy = new Set(shared.filter((r) => r.status === 200).map((r) => r.headers['x-served-by']));
    t.diagnostic(`Redis up: ${admitted} of 100 admitted, served by ${[...servedBy].join(', ')}`);
    const answered = shared.map((r) => `${r.status}/${r.headers['ratelimit-remaining']}@${r.headers['x-served-by']}`);
    assert.equal(admitted, 60, `exactly 60 admitted in the window: ${answered.join(' ')}`);
    assert.deepEqual([...servedBy].sort(), ['api1', 'api2'], 'both instances served');
    assert.ok(
      shared.every((r) => r.status === 200 || (r.status === 429 && r.json.code === 'rate_limited')),
      'the rest are 429',
    );

    // Redis stopped mid-window.
    const b = await c.tenant();
    await freshWindow(b.token, 20);
    for (let i = 0; i < 9; i++) await request('GET', `${c.lb}/v1/hooks`, { token: b.token });
    // The same load with Redis up, for a baseline: on a busy machine both figures rise together.
    const upMs = (await pool(300, 8, () => request('GET', `${c.lb}/v1/hooks`, { token: a.token }))).map((r) => r.ms);
    await c.stop('redis');
    const down = await pool(300, 8, () => request('GET', `${c.lb}/v1/hooks`, { token: b.token }));
    const byInstance: Record<string, number> = {};
    for (const r of down)
      if (r.status === 200)
        byInstance[String(r.headers['x-served-by'])] = (byInstance[String(r.headers['x-served-by'])] ?? 0) + 1;
    const failed = down.filter((r) => r.status >= 500 || r.status === 0);
    const ms = down.map((r) => r.ms);
    t.diagnostic(
      `Redis stopped: 300 requests, admitted ${JSON.stringify(byInstance)}, ${failed.length} failed, latency p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms`,
    );
    assert.equal(failed.length, 0, 'no 5xx and no failed request while Redis is down');
    for (const [name, n] of Object.entries(byInstance)) assert.ok(n <= 60, `${name} admitted ${n}, over 60`);
    const total = Object.values(byInstance).reduce((x, y) => x + y, 0);
    assert.ok(total <= 120, `${total} admitted in all, over 120`);
    // A dead Redis must cost a request nothing: no request may wait out the command timeout, as one would if hits
    // still went to Redis. Compared at p95 with the same load with Redis up, since on a busy machine a few requests
    // of either run are slow (CI saw a p99 of 49 ms with Redis up, 99 ms down, with the median at 6 ms).
    const p95Up = percentile(upMs, 95);
    const p95Down = percentile(ms, 95);
    const waited = ms.filter((x) => x >= COMMAND_TIMEOUT_MS).length;
    t.diagnostic(`same load with Redis up: p95 ${p95Up.toFixed(1)} ms, p99 ${percentile(upMs, 99).toFixed(1)} ms`);
    assert.ok(
      waited <= ms.length / 100,
      `${waited} of ${ms.length} requests took ${COMMAND_TIMEOUT_MS} ms or more with Redis down`,
    );
    assert.ok(
      p95Down < Math.max(50, 2 * p95Up),
      `p95 ${p95Down.toFixed(1)} ms with Redis down (with Redis up: ${p95Up.toFixed(1)} ms)`,
    );

    // Redis back: within one window a fresh key is counted once across both instances again.
    await c.start('redis');
    const back = await until(
      65_000,
      'shared counting again',
      async () => {
        const k = await c.tenant();
        await freshWindow(k.token, 10);
        const rs = await pool(79, 6, () => request('GET', `${c.lb}/v1/hooks`, { token: k.token }));
        return 1 + rs.filter((r) => r.status === 200).length === 60;
      },
      500,
    );
    t.diagnostic(`Redis back: shared counting again after ${(back / 1000).toFixed(1)} s`);
  });

  test('SIGTERM to one API instance under load: no failed request at the client', async (t) => {
    const { token } = await c.tenant(1_000_000);
    let stopping: Promise<string> | undefined;
    const t0 = performance.now();
    const answers = await pool(2000, 8, async (i) => {
      if (i === 1000) stopping = c.stop('api1');
      return request('GET', `${c.lb}/v1/hooks`, { token });
    });
    await stopping;
    const failed = answers.filter((r) => r.status !== 200);
    const api1After = answers.slice(1100).filter((r) => r.headers['x-served-by'] === 'api1').length;
    t.diagnostic(
      `2,000 requests in ${((performance.now() - t0) / 1000).toFixed(1)} s, api1 stopped at the 1,000th: ${failed.length} failed, served by api1 after the 1,100th: ${api1After}, p99 ${percentile(
        answers.map((r) => r.ms),
        99,
      ).toFixed(1)} ms`,
    );
    assert.equal(failed.length, 0, JSON.stringify(failed.slice(0, 3)));
    await c.start('api1');
    await until(
      10_000,
      'api1 back in rotation',
      async () => {
        const rs = await Promise.all([1, 2, 3, 4].map(() => request('GET', `${c.lb}/v1/hooks`, { token })));
        return rs.some((r) => r.headers['x-served-by'] === 'api1');
      },
      200,
    );
  });

  test('a worker killed mid-delivery: 1,000 events all delivered at least once; none after the hook is deleted', async (t) => {
    const { token } = await c.tenant(1_000_000);
    const hook = await request('POST', `${c.lb}/v1/hooks`, { token, body: { target_url: rx.url('/h1') } });
    assert.equal(hook.status, 201, JSON.stringify(hook.json));
    const onH1 = () => rx.deliveries.filter((d) => d.path === '/h1');
    // worker1 is killed while events are still being queued and delivered, then started again.
    let atKill = 0;
    let heldAtKill = 0;
    // Claims worker1 holds on this hook's deliveries, not yet recorded: what its death leaves behind.
    const held = async () =>
      Number(
        (
          await c.query<{ n: string }>(
            `select count(*) as n from delivery_queue q join deliveries d on d.id = q.id
               where d.hook_id = $1 and q.claimed_by like $2`,
            [hook.json.id, `%:${c.pid('worker1')}:%`],
          )
        )[0]!.n,
      );
    const killer = (async () => {
      const pid = c.pid('worker1')!;
      // Frozen (SIGSTOP) while its claims are counted, then killed if it holds some, else let go on: a worker left
      // running records its claims in the tens of milliseconds between a count and a kill (CI saw it die holding
      // none). What it held is counted again after its death.
      await until(
        60_000,
        '50 deliveries, worker1 holding claims',
        async () => {
          if (onH1().length < 50) return false;
          process.kill(pid, 'SIGSTOP');
          let holding = false;
          try {
            holding = (await held()) > 0;
          } finally {
            if (!holding) process.kill(pid, 'SIGCONT');
          }
          return holding;
        },
        2,
      );
      process.kill(pid, 'SIGKILL');
      atKill = onH1().length;
      heldAtKill = await held();
      await c.kill9('worker1'); // its pid file
      await sleep(500);
      await c.start('worker1');
    })();
    const events = await pool(1000, 16, async () => {
      const r = await request('POST', `${c.lb}/v1/hooks/${hook.json.id}/test`, { token });
      assert.equal(r.status, 202, JSON.stringify(r.json));
      return r.json.event_id as string;
    });
    await killer;
    // Claims the dead worker held come back when their lease (DELIVERY_LEASE_MS, 20 s here) lapses: a delivery it had sent without recording
    // the answer is sent again then (a duplicate), one it had not sent yet arrives only then.
    const took = await until(
      150_000,
      'every event delivered',
      () => {
        const got = new Set(onH1().map((d) => d.eventId));
        return events.every((e) => got.has(e));
      },
      250,
    );
    const settled = await until(
      150_000,
      'every delivery recorded (the dead worker’s leases lapsed and were worked again)',
      async () => {
        const open = await c.query<{ n: string }>(
          `select count(*) as n from deliveries where hook_id = $1 and status in ('pending', 'retrying')`,
          [hook.json.id],
        );
        return Number(open[0]!.n) === 0;
      },
      500,
    );
    const got = onH1();
    const distinct = new Set(got.map((d) => d.eventId)).size;
    t.diagnostic(
      `1,000 events; worker1 killed after ${atKill} deliveries holding ${heldAtKill} claims, and restarted; all received ${(took / 1000).toFixed(1)} s after the restart, all recorded after ${((took + settled) / 1000).toFixed(1)} s; ${got.length} deliveries for ${distinct} events: ${got.length - distinct} duplicates`,
    );
    assert.equal(distinct, 1000);
    assert.ok(heldAtKill > 0, 'worker1 died holding claims');

    // Deletion: events queued for a second hook; the hook is deleted once its deliveries flow.
    const h2 = await request('POST', `${c.lb}/v1/hooks`, { token, body: { target_url: rx.url('/h2') } });
    assert.equal(h2.status, 201);
    await pool(300, 16, () => request('POST', `${c.lb}/v1/hooks/${h2.json.id}/test`, { token }));
    const onH2 = () => rx.deliveries.filter((d) => d.path === '/h2');
    // The receiver (this process, busy with the load above) often answers slowly enough for a worker to hold it
    // slow: 8 requests in flight and the rest deferred, 8 more every 15 s (webhooks/targets.ts). Before and after the
    // due queue alike, 21 to 74 had arrived when 20 were waited for; CI once saw fewer than 20 in 30 s.
    await until(60_000, 'deliveries to the second hook', () => onH2().length >= 20, 2);
    const del = await request('DELETE', `${c.lb}/v1/hooks/${h2.json.id}`, { token });
    assert.equal(del.status, 204);
    const deletedAt = performance.now();
    const deletedAtWall = Date.now();
    await sleep(3000);
    // The contract (webhooks/dispatcher.ts): an attempt begins only after its hook was checked, and a worker sees a
    // deletion made elsewhere when the change notice reaches it. So attempts may begin just after DELETE answered
    // (a notice's latency under load), and none later than the probe's bound.
    const attempts = await c.query<{ late: number }>(
      `select a.started_at - $2::bigint as late from delivery_attempts a join deliveries d on d.id = a.delivery_id
        where d.hook_id = $1 and a.started_at > $2::bigint`,
      [h2.json.id, deletedAtWall],
    );
    const latest = Math.max(0, ...attempts.map((a) => Number(a.late)));
    const arrivedAfter = onH2().filter((d) => d.at > deletedAt).length;
    t.diagnostic(
      `second hook: ${onH2().length} of 300 delivered; ${attempts.length} attempts began after DELETE answered (latest ${latest} ms after); ${arrivedAfter} arrived after it`,
    );
    assert.ok(latest <= STALE_AFTER_MS, `an attempt began ${latest} ms after the hook was deleted`);
    assert.ok(onH2().length < 300, 'the deletion stopped deliveries');
  });

  test('PostgreSQL restarted under load: fast 503s during the outage, recovery without restarts, nothing committed lost', async (t) => {
    const { token } = await c.tenant(1_000_000);
    const hook = await request('POST', `${c.lb}/v1/hooks`, { token, body: { target_url: rx.url('/pg') } });
    assert.equal(hook.status, 201);
    const before = await request('POST', `${c.lb}/v1/hooks/${hook.json.id}/test`, { token });
    assert.equal(before.status, 202);
    const pids = ['api1', 'api2', 'worker1', 'worker2'].map((m) => c.pid(m as 'api1'));

    let running = true;
    const answers: Res[] = [];
    const load = async (i: number) => {
      while (running) {
        const r =
          i === 0
            ? await request('POST', `${c.lb}/v1/hooks/${hook.json.id}/test`, { token, timeoutMs: 10_000 })
            : await request('GET', `${c.lb}/v1/hooks`, { token, timeoutMs: 10_000 });
        answers.push(r);
        if (r.status !== 200 && r.status !== 202) await sleep(20);
      }
    };
    const loops = [0, 1, 2, 3].map(load);
    let outageMs: number;
    let recovered: number;
    try {
      await sleep(1000);
      const t0 = performance.now();
      await c.stop('pg');
      await sleep(3000);
      await c.start('pg');
      outageMs = performance.now() - t0;
      recovered = await until(
        15_000,
        'both instances answer from the database again',
        async () => {
          const rs = await Promise.all(
            [c.api1, c.api2].map((b) => request('GET', `${b}/v1/hooks/${hook.json.id}/deliveries`, { token })),
          );
          return rs.every((r) => r.status === 200);
        },
        100,
      );
      await sleep(1000);
    } finally {
      // Also on failure: loops left running would keep the test process (and CI) alive for ever.
      running = false;
      await Promise.all(loops);
    }

    const by: Record<string, number> = {};
    for (const r of answers) by[r.status] = (by[r.status] ?? 0) + 1;
    const bad = answers.filter(
      (r) => !(r.status === 200 || r.status === 202 || (r.status === 503 && r.json?.code === 'service_unavailable')),
    );
    const slowest = Math.max(...answers.map((r) => r.ms));
    t.diagnostic(
      `outage ${(outageMs / 1000).toFixed(1)} s; ${answers.length} requests: ${JSON.stringify(by)}; slowest ${slowest.toFixed(0)} ms; recovered ${(recovered / 1000).toFixed(1)} s after PostgreSQL was back`,
    );
    assert.equal(bad.length, 0, JSON.stringify(bad.slice(0, 3).map((r) => [r.status, r.json, r.error])));
    assert.ok(slowest < 5000, `a request took ${slowest.toFixed(0)} ms`);
    assert.ok((by[503] ?? 0) > 0, 'the outage was seen');
    assert.deepEqual(
      ['api1', 'api2', 'worker1', 'worker2'].map((m) => c.pid(m as 'api1')),
      pids,
      'no process was restarted',
    );

    // Committed before the outage: the hook and its event; after it, a new event is delivered too.
    const list = await request('GET', `${c.lb}/v1/hooks`, { token });
    assert.ok(
      list.json.some((h: { id: string }) => h.id === hook.json.id),
      'the hook is still there',
    );
    const afterOutage = await request('POST', `${c.lb}/v1/hooks/${hook.json.id}/test`, { token });
    assert.equal(afterOutage.status, 202);
    await until(
      30_000,
      'events before and after the outage delivered',
      () => {
        const got = new Set(rx.deliveries.filter((d) => d.path === '/pg').map((d) => d.eventId));
        return got.has(before.json.event_id) && got.has(afterOutage.json.event_id);
      },
      100,
    );
  });
});
