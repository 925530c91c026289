// Ids from the pooled random bytes: the documented shapes, no two alike across many refills of the pool, and the
// ordered ids sorting by the time they were made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newEventId, newId, newOrderedId, orderedId } from './ids.js';

test('ids keep their shapes and never repeat across pool refills', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5_000; i++) {
    const id = newId('del');
    const ordered = newOrderedId('del');
    const evt = newEventId();
    assert.match(id, /^del_[0-9a-f]{24}$/);
    assert.match(ordered, /^del_[0-9a-f]{24}$/);
    assert.match(evt, /^evt_[0-9a-f]{32}$/);
    seen.add(id.slice(4)).add(ordered.slice(4)).add(evt.slice(4));
  }
  assert.equal(seen.size, 15_000, 'every id distinct (200 KB of random bytes: about 50 refills)');
});

test('ordered ids sort by the millisecond they were made in, as text', () => {
  const times = [0, 1, 255, 256, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 2 ** 47];
  const ids = times.map((t, i) => orderedId('del', t, (0xffffff - i).toString(16).padStart(12, '0')));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(orderedId('evt', 1_700_000_000_000, 'ab'.repeat(10)), 'evt_018bcfe56800' + 'ab'.repeat(10));
  // Made now: the time part is the clock's, so a later id never sorts before an earlier one of another millisecond.
  const before = Date.now();
  const made = newOrderedId('mail');
  const after = Date.now();
  const t = parseInt(made.slice(5, 17), 16);
  assert.ok(t >= before && t <= after, `${made} carries the time it was made`);
});
