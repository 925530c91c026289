import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkerPool } from './worker-pool.js';

const mod = new URL('./testing/echo.worker.ts', import.meta.url);

test('runs tasks off the main thread, in parallel, and survives a crashing task', async () => {
  const pool = createWorkerPool<{ op: string; n?: number }, unknown>(mod, 2);
  try {
    assert.deepEqual(await pool.run({ op: 'echo', n: 41 }), { n: 42, main: false });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run({ op: 'echo', n: i })));
    assert.deepEqual(results.map((r) => (r as { n: number }).n), [1, 2, 3, 4, 5, 6]);
    await assert.rejects(pool.run({ op: 'throw' }), /boom/);
    await assert.rejects(pool.run({ op: 'exit' }), /worker exited/);
    assert.deepEqual(await pool.run({ op: 'echo', n: 1 }), { n: 2, main: false }, 'a replacement worker takes over');
  } finally {
    await pool.close();
  }
  await assert.rejects(pool.run({ op: 'echo' }), /closed/);
});
