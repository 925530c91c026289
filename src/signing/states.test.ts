import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DOCUMENT_MOVES,
  DOCUMENT_STATUSES,
  OPEN_REQUEST_STATUSES,
  REQUEST_MOVES,
  REQUEST_STATUSES,
  SEAL_MOVES,
  SEAL_STATES,
  canMoveRequest,
} from './states.js';

test('every move names known statuses, and no move leaves a final state', () => {
  const finalRequest = ['signed', 'declined', 'withdrawn', 'expired'];
  for (const [name, m] of Object.entries(REQUEST_MOVES)) {
    assert.ok((REQUEST_STATUSES as readonly string[]).includes(m.to), name);
    for (const f of m.from) {
      assert.ok((REQUEST_STATUSES as readonly string[]).includes(f), `${name} from ${f}`);
      assert.ok(!finalRequest.includes(f), `${name} leaves final state ${f}`);
    }
  }
  const finalDocument = ['completed', 'declined', 'withdrawn', 'expired', 'discarded'];
  for (const [name, m] of Object.entries(DOCUMENT_MOVES)) {
    assert.ok((DOCUMENT_STATUSES as readonly string[]).includes(m.to), name);
    assert.equal(m.from.length, 1, name);
    // In progress moves to a final state; a template draft only to in progress (confirm) or discarded.
    if (m.from[0] === 'draft') assert.ok(['in_progress', 'discarded'].includes(m.to), name);
    else assert.deepEqual([m.from[0], finalDocument.includes(m.to)], ['in_progress', true], name);
  }
});

test('sealing only moves forward: none → pending → done, each from exactly one state', () => {
  const order: readonly string[] = SEAL_STATES;
  for (const [name, m] of Object.entries(SEAL_MOVES)) {
    assert.equal(m.from.length, 1, name);
    assert.equal(order.indexOf(m.to), order.indexOf(m.from[0]!) + 1, name);
  }
  assert.deepEqual(
    Object.values(SEAL_MOVES).map((m) => m.to),
    ['pending', 'done'],
  );
});

test("the spec's rows: a signer signs from pending (or viewed); the hourly expiry takes pending and viewed only", () => {
  assert.equal(canMoveRequest('sign', 'pending'), true);
  assert.equal(canMoveRequest('sign', 'viewed'), true);
  assert.equal(canMoveRequest('sign', 'queued'), false, 'a queued sequential signer cannot sign yet');
  assert.deepEqual([...REQUEST_MOVES.expire.from].sort(), ['pending', 'viewed']);
  assert.deepEqual(OPEN_REQUEST_STATUSES, REQUEST_MOVES.sign.from);
  assert.equal(canMoveRequest('view', 'viewed'), false, 'viewed once');
  assert.equal(canMoveRequest('withdraw', 'queued'), true);
});
