// The lease-claim runner with a job defined here (its claims are an in-memory queue), so each rule of the runner
// is checked on its own: batches until nothing is due, bounded concurrency, hand-back of items it must not start,
// wake-ups of the background loop, a stop that waits for work in flight, and the pipelined claims of `prefetch`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../lib/clock.js';
import { createRunner, LEASE_MARGIN_MS, type LeaseJob, type RunnerOptions } from './runner.js';

type Item = { id: number; claimExpiresAt: number };

function queueJob(
  n: number,
  o: { workMs?: number; fail?: (id: number) => boolean; leaseFor?: (now: number, leaseMs: number) => number } = {},
) {
  const due = Array.from({ length: n }, (_, i) => i);
  const log = { worked: [] as number[], released: [] as number[], claims: 0, inFlight: 0, maxInFlight: 0, settled: 0 };
  const job: LeaseJob<Item> = {
    async claim({ now, leaseMs, limit }) {
      log.claims++;
      return due
        .splice(0, limit)
        .map((id) => ({ id, claimExpiresAt: o.leaseFor ? o.leaseFor(now, leaseMs) : now + leaseMs }));
    },
    async work(item) {
      log.inFlight++;
      log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
      try {
        await new Promise((r) => setTimeout(r, o.workMs ?? 1));
        if (o.fail?.(item.id)) throw new Error(`item ${item.id} failed`);
        log.worked.push(item.id);
        return true;
      } finally {
        log.inFlight--;
      }
    },
    async release(item) {
      log.released.push(item.id);
    },
    async settle() {
      log.settled++;
    },
  };
  return { job, log, due };
}

const options = (over: Partial<RunnerOptions> = {}): RunnerOptions => ({
  name: 'test',
  clock: new ManualClock(0),
  workerId: 'w',
  leaseMs: 60_000,
  timeoutMs: 10_000,
  batchSize: 4,
  concurrency: 2,
  pollIntervalMs: 60_000,
  ...over,
});

test('runOnce works every due item batch by batch, at most `concurrency` at once, then settles', async () => {
  const { job, log } = queueJob(10, { workMs: 5 });
  const runner = createRunner(job, options());
  assert.equal(await runner.runOnce(), 10);
  assert.deepEqual(
    [...log.worked].sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  assert.equal(log.claims, 4, 'three batches of at most 4, then an empty claim');
  assert.equal(log.maxInFlight, 2);
  assert.equal(log.settled, 1);
  await runner.stop();
});

test('an item whose lease would not outlast the time limit is handed back, not worked', async () => {
  const { job, log } = queueJob(3, { leaseFor: (now) => now + 10_000 + LEASE_MARGIN_MS - 1 });
  const runner = createRunner(job, options());
  assert.equal(await runner.runOnce(), 0);
  assert.deepEqual(log.released, [0, 1, 2]);
  assert.deepEqual(log.worked, []);
  await runner.stop();
});

test('a failing item is logged and skipped; the pass goes on', async () => {
  const errors: string[] = [];
  const { job, log } = queueJob(4, { fail: (id) => id === 1 });
  const logger = {
    info() {},
    warn() {},
    error: (o: object, m?: string) => void errors.push(`${m} ${JSON.stringify(o)}`),
  };
  const runner = createRunner(job, options({ logger }));
  assert.equal(await runner.runOnce(), 3);
  assert.deepEqual([...log.worked].sort(), [0, 2, 3]);
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /item 1 failed/);
  await runner.stop();
});

test('the background loop sleeps when idle and wake() ends the sleep at once', async () => {
  const { job, log, due } = queueJob(0);
  const runner = createRunner(job, options({ pollIntervalMs: 60_000 }));
  runner.start();
  await new Promise((r) => setTimeout(r, 20));
  const claims = log.claims;
  due.push(7);
  runner.wake();
  for (let i = 0; i < 100 && log.worked.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(log.worked, [7], 'worked long before the 60 s poll interval');
  assert.ok(log.claims > claims, 'log.claims > claims');
  await runner.stop();
});

test('stop() waits for work in flight, hands back what was not started, and claims nothing after', async () => {
  const { job, log, due } = queueJob(6, { workMs: 50 });
  const runner = createRunner(job, options({ batchSize: 6, concurrency: 2 }));
  const pass = runner.runOnce();
  await new Promise((r) => setTimeout(r, 10));
  await runner.stop();
  assert.equal(await pass, 2, 'the two started items finished');
  assert.deepEqual([...log.worked].sort(), [0, 1]);
  assert.deepEqual([...log.released].sort(), [2, 3, 4, 5]);
  assert.equal(await runner.runOnce(), 0);
  due.push(9);
  runner.start();
  assert.equal(due.length, 1, 'a stopped runner claims nothing');
});

test('a lease that cannot outlast the time limit is a configuration error', () => {
  const { job } = queueJob(0);
  assert.throws(() => createRunner(job, options({ leaseMs: 10_000, timeoutMs: 10_000 })), /leaseMs/);
});

test('prefetch: the next batch is claimed while the current one is worked; every item once, concurrency kept', async () => {
  const { job, log } = queueJob(30, { workMs: 5 });
  let claimsWhileWorking = 0;
  const claim = job.claim;
  job.claim = (o) => {
    if (log.inFlight > 0) claimsWhileWorking++;
    return claim(o);
  };
  const runner = createRunner(job, options({ prefetch: true, batchSize: 6, concurrency: 3 }));
  assert.equal(await runner.runOnce(), 30);
  assert.deepEqual(
    [...log.worked].sort((a, b) => a - b),
    Array.from({ length: 30 }, (_, i) => i),
  );
  assert.ok(claimsWhileWorking >= 4, `claims overlapped the work (${claimsWhileWorking})`);
  assert.equal(log.maxInFlight, 3);
  assert.equal(log.settled, 1);
  await runner.stop();
});

test('prefetch: stop() hands back every claimed item not started, the prefetched batch included', async () => {
  const { job, log } = queueJob(12, { workMs: 40 });
  const runner = createRunner(job, options({ prefetch: true, batchSize: 4, concurrency: 2 }));
  const pass = runner.runOnce();
  await new Promise((r) => setTimeout(r, 10));
  await runner.stop();
  const done = await pass;
  assert.equal(done, log.worked.length);
  const claimed = [...log.worked, ...log.released].sort((a, b) => a - b);
  assert.deepEqual(
    claimed,
    Array.from({ length: claimed.length }, (_, i) => i),
    'each claimed item worked or released',
  );
  assert.ok(log.released.length > 0 && log.worked.length <= 4, 'most of it handed back');
});

test('prefetch: a failing claim ends the pass with its error after the claimed items are worked', async () => {
  const { job, log } = queueJob(8, { workMs: 5 });
  const claim = job.claim;
  let n = 0;
  job.claim = (o) => (++n === 2 ? Promise.reject(new Error('database away')) : claim(o));
  const runner = createRunner(job, options({ prefetch: true, batchSize: 4, concurrency: 2 }));
  await assert.rejects(runner.runOnce(), /database away/);
  assert.deepEqual([...log.worked].sort(), [0, 1, 2, 3]);
  assert.equal(log.settled, 1);
  await runner.stop();
});
