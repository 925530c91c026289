import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createWorkerPool, type WorkerPool, WorkerTaskTimeout } from './worker-pool.js';
import type { EchoInput } from './testing/echo.worker.js';

const mod = new URL('./testing/echo.worker.ts', import.meta.url);
type Who = { thread: number; warmups: number };

/**
 * Runs two tasks that must land on two different workers: the first holds its worker until the second has been
 * answered, so the second cannot be taken by the same one.
 */
async function onTwoWorkers(pool: WorkerPool<EchoInput, Who>): Promise<[Who, Who]> {
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const held = pool.run({ op: 'hold', gate });
  held.catch(() => {}); // awaited below unless the other task fails
  let other: Who;
  try {
    other = await pool.run({ op: 'spin', ms: 0 });
  } finally {
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
  }
  const first = await held;
  assert.notEqual(first.thread, other.thread);
  return [first, other];
}

test('runs tasks off the main thread, in parallel, and survives a crashing task', async () => {
  const pool = createWorkerPool<EchoInput, unknown>(mod, { size: 2 });
  try {
    assert.deepEqual(await pool.run({ op: 'echo', n: 41 }), { n: 42, main: false });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run({ op: 'echo', n: i })));
    assert.deepEqual(
      results.map((r) => (r as { n: number }).n),
      [1, 2, 3, 4, 5, 6],
    );
    await assert.rejects(pool.run({ op: 'throw' }), /boom/);
    await assert.rejects(pool.run({ op: 'exit' }), /worker exited/);
    assert.deepEqual(await pool.run({ op: 'echo', n: 1 }), { n: 2, main: false }, 'a replacement worker takes over');
  } finally {
    await pool.close();
  }
  await assert.rejects(pool.run({ op: 'echo' }), /closed/);
});

test('a task over its limit fails with WorkerTaskTimeout and only its worker is replaced', async () => {
  const pool = createWorkerPool<EchoInput, Who>(mod, { size: 2 });
  try {
    const [a, b] = (await onTwoWorkers(pool)).map((w) => w.thread);

    const t0 = performance.now();
    let innocentAt = 0;
    let doomedAt = 0;
    const innocent = pool
      .run({ op: 'spin', ms: 400 }, { timeoutMs: 10_000 })
      .finally(() => (innocentAt = performance.now()));
    const doomed = pool.run({ op: 'spin', ms: 5_000 }, { timeoutMs: 50 }).finally(() => (doomedAt = performance.now()));
    const queued = pool.run({ op: 'spin', ms: 0 }, { timeoutMs: 10_000 });
    await assert.rejects(doomed, (err: unknown) => err instanceof WorkerTaskTimeout && err.timeoutMs === 50);
    assert.ok(doomedAt - t0 < 2_000, `the limit ended the task (${Math.round(doomedAt - t0)} ms)`);
    const survivor = (await innocent).thread;
    assert.ok(innocentAt > doomedAt, 'the innocent task was still running when the other worker was killed');
    assert.ok([a, b].includes(survivor), 'the innocent task finished on one of the original workers');
    const killed = survivor === a ? b : a;
    await queued; // the queued task carried on, on the survivor or the replacement

    // Two workers again: the survivor and a replacement for the killed one.
    const threads = (await onTwoWorkers(pool)).map((w) => w.thread);
    assert.ok(threads.includes(survivor), 'the innocent worker was kept');
    assert.ok(!threads.includes(killed), 'the killed worker is gone');
  } finally {
    await pool.close();
  }
});

test('time spent in the queue is not charged to a task', async () => {
  const pool = createWorkerPool<EchoInput, Who>(mod, { size: 1 });
  try {
    await pool.run({ op: 'spin', ms: 0 }); // the worker is up
    const blocker = pool.run({ op: 'spin', ms: 300 });
    // Queued behind 300 ms of work with a 100 ms limit: only its own (tiny) run counts.
    const queued = pool.run({ op: 'spin', ms: 0 }, { timeoutMs: 100 });
    const [x, y] = await Promise.all([blocker, queued]);
    assert.equal(x.thread, y.thread, 'same worker, so the second task did wait');
  } finally {
    await pool.close();
  }
});

test('every new worker runs the warm-up, uncharged, before any task: at start and after a kill or a crash', async () => {
  // The warm-up takes 300 ms; every task below has a 100 ms limit, so it fails if the warm-up is charged to it.
  const pool = createWorkerPool<EchoInput, Who>(mod, { size: 1, warmup: { op: 'warmup', ms: 300 } });
  const quick = () => pool.run({ op: 'spin', ms: 0 }, { timeoutMs: 100 });
  try {
    const first = await quick();
    assert.equal(first.warmups, 1, 'the first worker warmed up once, before the task');

    await assert.rejects(pool.run({ op: 'spin', ms: 5_000 }, { timeoutMs: 50 }), WorkerTaskTimeout);
    const afterKill = await quick();
    assert.notEqual(afterKill.thread, first.thread, 'the killed worker was replaced');
    assert.equal(afterKill.warmups, 1, 'the replacement warmed up before its first task');

    await assert.rejects(pool.run({ op: 'exit' }), /worker exited/);
    const afterCrash = await quick();
    assert.notEqual(afterCrash.thread, afterKill.thread, 'the crashed worker was replaced');
    assert.equal(afterCrash.warmups, 1, 'the replacement warmed up before its first task');
  } finally {
    await pool.close();
  }

  const two = createWorkerPool<EchoInput, Who>(mod, { size: 2, warmup: { op: 'warmup' } });
  try {
    const both = await onTwoWorkers(two);
    assert.deepEqual(
      both.map((w) => w.warmups),
      [1, 1],
      'each worker warmed up once',
    );
  } finally {
    await two.close();
  }
});

test('a failing warm-up fails the queued tasks instead of wedging the pool; a later task tries a new worker', async () => {
  const pool = createWorkerPool<EchoInput, Who>(mod, { size: 1, warmup: { op: 'warmup', fail: true } });
  try {
    await assert.rejects(pool.run({ op: 'spin', ms: 0 }), /worker warm-up failed: warm-up broke/);
    await assert.rejects(pool.run({ op: 'spin', ms: 0 }), /worker warm-up failed: warm-up broke/);
  } finally {
    await pool.close();
  }
});

test('close() fails running and queued tasks and stops the workers at once', async () => {
  const pool = createWorkerPool<EchoInput, Who>(mod, { size: 1 });
  await pool.run({ op: 'spin', ms: 0 }); // the worker is up
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const timersBefore = timers();
  const running = pool.run({ op: 'spin', ms: 5_000 }, { timeoutMs: 60_000 });
  const queued = pool.run({ op: 'spin', ms: 0 }, { timeoutMs: 60_000 });
  const failed = [assert.rejects(running, /worker pool closed/), assert.rejects(queued, /worker pool closed/)];
  const t0 = performance.now();
  await pool.close();
  assert.ok(performance.now() - t0 < 2_000, 'close did not wait for the running task');
  await Promise.all(failed);
  assert.equal(timers(), timersBefore, "the running task's timer was cleared");
  await assert.rejects(pool.run({ op: 'spin', ms: 0 }), /worker pool closed/);
});

/** Runs a module in a fresh process (so nothing else holds its event loop) and returns its stdout. */
async function child(script: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'worker-pool-test-'));
  const file = path.join(dir, 'main.mjs');
  await writeFile(
    file,
    `import { createWorkerPool } from ${JSON.stringify(new URL('./worker-pool.ts', import.meta.url).href)};
const mod = new URL(${JSON.stringify(mod.href)});
${script}`,
  );
  try {
    return await new Promise((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', file], { timeout: 20_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a warm-up that hangs past its limit counts as a failed start: queued tasks fail instead of waiting for ever', async () => {
  const pool = createWorkerPool<EchoInput, Who>(mod, {
    size: 1,
    warmup: { op: 'warmup', ms: 5_000 },
    warmupTimeoutMs: 200,
  });
  try {
    const t0 = performance.now();
    await assert.rejects(pool.run({ op: 'spin', ms: 0 }), /worker warm-up failed: no answer within 200 ms/);
    assert.ok(performance.now() - t0 < 4_000, 'failed at the warm-up limit, not when the warm-up ended');
  } finally {
    await pool.close();
  }
});

test('an awaited task keeps the process alive until it settles, even behind a warm-up; an idle warming pool does not', async () => {
  const [awaited, idle] = await Promise.all([
    child(`const pool = createWorkerPool(mod, { size: 1, warmup: { op: 'warmup', ms: 200 } });
const ok = await pool.run({ op: 'spin', ms: 200 }, { timeoutMs: 5000 });
const late = await pool.run({ op: 'spin', ms: 5000 }, { timeoutMs: 50 }).catch((e) => e.name);
console.log(JSON.stringify({ warmups: ok.warmups, late }));`),
    // Would never exit if a warming (or idle) worker held the event loop open; execFile's timeout fails the test.
    child(`createWorkerPool(mod, { size: 1, warmup: { op: 'warmup', ms: 60000 } }); console.log('created');`),
  ]);
  assert.deepEqual(JSON.parse(awaited), { warmups: 1, late: 'WorkerTaskTimeout' });
  assert.equal(idle.trim(), 'created');
});

test('workers start on demand and stop after the idle timeout; the next task starts (and warms) a new one', async () => {
  const pool = createWorkerPool<EchoInput, Who>(mod, { size: 2, warmup: { op: 'warmup' }, idleTimeoutMs: 150 });
  try {
    assert.equal(pool.workers, 0, 'no worker before the first task');
    const first = await pool.run({ op: 'spin', ms: 0 });
    assert.equal(pool.workers, 1, 'one task, one worker');
    // Busy workers are never stopped: a task running past the idle timeout keeps its worker.
    const long = await pool.run({ op: 'spin', ms: 300 });
    assert.equal(long.thread, first.thread, 'the same worker, kept while busy and between tasks');
    const t0 = performance.now();
    while (pool.workers > 0) {
      assert.ok(performance.now() - t0 < 5_000, 'the idle worker stops');
      await new Promise((r) => setTimeout(r, 20));
    }
    const next = await pool.run({ op: 'spin', ms: 0 }, { timeoutMs: 100 });
    assert.notEqual(next.thread, first.thread, 'a new worker');
    assert.equal(next.warmups, 1, 'which warmed up before its task');
  } finally {
    await pool.close();
  }
});
