// Runs its own throwaway redis-server so the tests can kill, freeze and restart it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ManualClock } from '../lib/clock.js';
import { createRedisLimiter } from './redis-store.js';
import { createRateLimiter } from './ratelimit.js';
import type { Logger } from '../lib/logger.js';
import type { RateDecision, RateLimiter } from './policy.js';
import { freePort } from '../testing/child-server.js';

const hasRedisServer = !spawnSync('redis-server', ['--version']).error;
const skip = hasRedisServer ? false : 'redis-server not on PATH';
const COOLDOWN = 1_000;

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) return child;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start');
}

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

function recordingLogger() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const logger: Logger = {
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
  return { logger, lines };
}

/** One hit, asserting it neither throws nor takes long. */
async function timedHit(limiter: RateLimiter, bucket: string, maxMs = 1000): Promise<RateDecision & { ms: number }> {
  const t = performance.now();
  const d = await limiter.hit(bucket);
  const ms = performance.now() - t;
  assert.ok(ms < maxMs, `hit took ${ms.toFixed(0)} ms`);
  return { ...d, ms };
}

/** Polls (real time, at most ~5 s) until the limiter serves from Redis again. */
async function untilRedis(limiter: RateLimiter, clock: ManualClock): Promise<number> {
  for (let attempt = 1; attempt <= 50; attempt++) {
    clock.advance(COOLDOWN); // past the breaker's cool-down, which runs on the injected clock
    await timedHit(limiter, 'probe');
    if (limiter.mode === 'redis') return attempt;
    await sleep(100);
  }
  assert.fail('limiter did not return to Redis within 5 s');
}

describe('redis outage', { skip }, () => {
  let port: number;
  let url: string;
  let child: ChildProcess | undefined;
  const open: RateLimiter[] = [];
  const make = (clock: ManualClock, logger?: Logger) => {
    const l = createRedisLimiter({ url, clock, prefix: 'rl:', logger, breakerCooldownMs: COOLDOWN });
    open.push(l);
    return l;
  };

  before(async () => {
    port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    child = await startRedis(port);
  });
  after(async () => {
    if (child?.signalCode === null) child.kill('SIGCONT');
    await Promise.all(open.map((l) => l.close()));
    await kill(child);
  });

  it('costs exactly one round trip (one script call) per hit', async () => {
    const limiter = make(new ManualClock(1_000_000));
    await limiter.hit('warm');
    const admin = new Redis(url);
    try {
      await admin.config('RESETSTAT');
      for (let i = 0; i < 10; i++) await limiter.hit('k');
      const stats = await admin.info('commandstats');
      const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      assert.equal(calls('evalsha') + calls('eval'), 10);
      assert.equal(calls('evalsha'), 10, 'script is cached per connection after the first EVAL');
    } finally {
      await admin.quit();
    }
  });

  it('on a frozen Redis pays the command timeout once per cool-down, not per request', async () => {
    const clock = new ManualClock(2_000_000);
    const { logger, lines } = recordingLogger();
    const limiter = make(clock, logger);
    await limiter.hit('k');
    assert.equal(limiter.mode, 'redis');

    child!.kill('SIGSTOP'); // socket stays open, replies stop: only the command timeout notices
    try {
      const first = await timedHit(limiter, 'k');
      assert.equal(limiter.mode, 'fallback');
      assert.ok(first.ms >= 200, `first hit should have waited for the timeout, took ${first.ms.toFixed(0)} ms`);
      const t = performance.now();
      for (let i = 0; i < 50; i++) await timedHit(limiter, 'k');
      assert.ok(performance.now() - t < 250, 'breaker open: no waiting on Redis');
      assert.equal(limiter.mode, 'fallback');
      // Fallback counted 51 so far in this instance; the policy still holds.
      for (let i = 0; i < 9; i++) assert.equal((await timedHit(limiter, 'k')).allowed, true);
      const refused = await timedHit(limiter, 'k');
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterSeconds, 60);

      clock.advance(COOLDOWN); // half-open: one probe pays the timeout again
      const probe = await timedHit(limiter, 'k');
      assert.ok(probe.ms >= 200, `probe should have tried Redis, took ${probe.ms.toFixed(0)} ms`);
      assert.equal(limiter.mode, 'fallback');
    } finally {
      child!.kill('SIGCONT');
    }
    await untilRedis(limiter, clock);
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn', 'info'],
    );
  });

  it('keeps enforcing the limit per instance while Redis is dead and returns to Redis once it is back', async () => {
    const clock = new ManualClock(3_000_000);
    const { logger, lines } = recordingLogger();
    const limiter = make(clock, logger);
    for (let i = 0; i < 5; i++) await limiter.hit('before');
    assert.equal(limiter.mode, 'redis');

    await kill(child);
    const decisions: RateDecision[] = [];
    for (let i = 0; i < 61; i++) decisions.push(await timedHit(limiter, 'key_live'));
    assert.equal(limiter.mode, 'fallback');
    assert.equal(decisions.filter((d) => d.allowed).length, 60);
    assert.deepEqual(
      decisions.slice(0, 60).map((d) => d.remaining),
      Array.from({ length: 60 }, (_, i) => 59 - i),
    );
    const last = decisions[60];
    assert.equal(last.allowed, false);
    assert.equal(last.remaining, 0);
    assert.equal(last.retryAfterSeconds, 60);
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn'],
    );

    child = await startRedis(port);
    const attempts = await untilRedis(limiter, clock);
    assert.ok(attempts <= 50, 'attempts <= 50');
    assert.equal((await timedHit(limiter, 'after')).remaining, 59);
    assert.equal(limiter.mode, 'redis');
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn', 'info'],
    );
    // Logs carry state, never bucket ids, key prefixes or connection strings.
    const logged = JSON.stringify(lines);
    for (const secret of ['key_live', 'rl:', url]) assert.ok(!logged.includes(secret), `log leaks ${secret}`);
  });

  it('falls back at once when Redis is unreachable from the start, without throwing', async () => {
    const deadPort = await freePort();
    const { logger, lines } = recordingLogger();
    const limiter = await createRateLimiter({
      redisUrl: `redis://127.0.0.1:${deadPort}`,
      clock: new ManualClock(4_000_000),
      logger,
    });
    open.push(limiter);
    let admitted = 0;
    for (let i = 0; i < 61; i++) if ((await timedHit(limiter, 'k')).allowed) admitted++;
    assert.equal(admitted, 60);
    assert.equal(limiter.mode, 'fallback');
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn'],
    );
  });
});
