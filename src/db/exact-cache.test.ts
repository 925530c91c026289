import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createExactCache } from './exact-cache.js';

function setup(max = 3) {
  const state = { version: 1 as number | null, loads: [] as string[] };
  const cache = createExactCache<string, string | undefined>({
    probe: { version: () => state.version },
    max,
    load: async (k) => (state.loads.push(k), k.startsWith('missing') ? undefined : `value of ${k}`),
    keep: (v) => v !== undefined,
  });
  return { state, cache };
}

test('served from memory only at the reading it was loaded at', async () => {
  const { state, cache } = setup();
  assert.equal(cache.get('a', 1), undefined);
  assert.equal(await cache.load('a'), 'value of a');
  assert.equal(await cache.load('a'), 'value of a');
  assert.deepEqual(state.loads, ['a']);
  assert.equal(cache.get('a', 1), 'value of a');
  assert.equal(cache.get('a', 2), undefined);
  state.version = 2;
  await cache.load('a');
  assert.deepEqual(state.loads, ['a', 'a'], 'a write since: loaded again');
});

test('no reading (in a transaction; no probe): loaded every time and never kept', async () => {
  const { state, cache } = setup();
  state.version = null;
  await cache.load('a');
  await cache.load('a');
  assert.deepEqual(state.loads, ['a', 'a']);
  assert.equal(cache.size, 0);
  const none = createExactCache({ probe: null, max: 3, load: async () => 1 });
  assert.equal(none.version(), null);
  await none.load('x');
  assert.equal(none.size, 0);
});

test('values refused by keep() are not kept; the oldest entry goes first beyond max', async () => {
  const { state, cache } = setup(2);
  assert.equal(await cache.load('missing-1'), undefined);
  assert.equal(cache.size, 0);
  for (const k of ['a', 'b', 'c']) await cache.load(k);
  assert.equal(cache.size, 2);
  state.loads.length = 0;
  await cache.load('c');
  await cache.load('b');
  await cache.load('a');
  assert.deepEqual(state.loads, ['a'], 'a was evicted; b and c stayed');
});

test('a reading taken before a slow load stays with the entry, so a write during the load leaves it stale', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let version = 1;
  const cache = createExactCache<string, number>({
    probe: { version: () => version },
    max: 9,
    load: async () => (await gate, 42),
  });
  const pending = cache.load('k');
  version = 2;
  release();
  assert.equal(await pending, 42);
  assert.equal(cache.get('k', 2), undefined, 'stored under reading 1, not 2');
  assert.equal(cache.get('k', 1), 42);
});
