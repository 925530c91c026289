// DELIVERY_LEASE_MS reaches the worker: a delivery in flight is held until the claim time plus that lease, so a dead
// worker's deliveries go to others after it (the cluster tests rely on the shortest one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness } from '../testing/harness.js';
import { deliveriesWhere, receiver } from './testing/dispatcher.js';

test('a delivery in flight is leased for DELIVERY_LEASE_MS', async (t) => {
  let answer: (() => void) | undefined;
  // The receiver holds its answer, so the claim is read while the delivery is on the wire.
  const rx = await receiver((_q, res) => (answer = () => res.end('ok')));
  const h = await startHarness({ env: { DELIVERY_LEASE_MS: '20000' } });
  t.after(async () => {
    answer?.();
    await h.close();
    await rx.close();
  });
  const tenant = await h.tenant();
  const hook = await h.request('POST', '/v1/hooks', { token: tenant.token, body: { target_url: rx.url } });
  assert.equal(hook.status, 201, hook.text);
  const sent = await h.request('POST', `/v1/hooks/${hook.json.id}/test`, { token: tenant.token });
  assert.equal(sent.status, 202, sent.text);
  const working = h.work();
  await rx.waitFor(1);
  const [row] = await deliveriesWhere(h.db, 'hook_id', hook.json.id);
  assert.ok(row, 'a delivery');
  assert.ok(row.claimed_by, 'claimed while on the wire');
  assert.equal(Number(row.claim_expires_at), h.clock.now() + 20_000);
  answer!();
  await working;
});
