// Ids from the pooled random bytes: the documented shapes, and no two alike across many refills of the pool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newEventId, newId } from './ids.js';

test('ids keep their shapes and never repeat across pool refills', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5_000; i++) {
    const id = newId('del');
    const evt = newEventId();
    assert.match(id, /^del_[0-9a-f]{24}$/);
    assert.match(evt, /^evt_[0-9a-f]{32}$/);
    seen.add(id.slice(4)).add(evt.slice(4));
  }
  assert.equal(seen.size, 10_000, 'every id distinct (140 KB of random bytes: about 35 refills)');
});
