// Delivery history through the API under the events retention, on both databases: the real app on a real port and
// a real receiver, the clock moved to the boundary. A settled delivery is listed and replayable for the whole
// retention after its last attempt, and gone (404 on replay) a millisecond later; a retrying one is never pruned.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startHarness, type Harness } from '../testing/harness.js';
import { startReceiver, type Receiver } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';

for (const d of await bothDatabases()) {
  describe(`delivery history under the events retention (${d.name})`, { skip: d.skip }, () => {
    let h: Harness;
    let rx: Receiver;
    before(async () => {
      h = await startHarness({ database: d.database });
      rx = await startReceiver();
    });
    after(async () => {
      await rx?.close();
      await h?.close();
    });

    async function hook(token: string, accepting: boolean) {
      const p = `/r/${randomBytes(6).toString('hex')}`;
      const created = await h.request('POST', '/v1/hooks', { token, body: { target_url: rx.url(p) } });
      assert.equal(created.status, 201, created.text);
      const { id, secret } = created.json as { id: string; secret: string };
      if (accepting) rx.secrets.set(p, secret); // otherwise the receiver answers 400: the delivery keeps retrying
      const test = await h.request('POST', `/v1/hooks/${id}/test`, { token });
      assert.equal(test.status, 202, test.text);
      return {
        history: async () =>
          ((await h.request('GET', `/v1/hooks/${id}/deliveries`, { token })).json as { id: string; status: string }[])
            .map((x) => `${x.id}:${x.status}`)
            .sort(),
        replay: (deliveryId: string) => h.request('POST', `/v1/hooks/${id}/deliveries/${deliveryId}/replay`, { token }),
      };
    }

    test('listed and replayable until the retention ends, then gone; a retrying delivery stays', async () => {
      const t = await h.tenant();
      const ok = await hook(t.token, true);
      const failing = await hook(t.token, false);
      const settledAt = h.clock.now();
      await h.work();
      const [done] = await ok.history();
      assert.match(done!, /:succeeded$/);
      const doneId = done!.split(':')[0]!;
      const [retrying] = await failing.history();
      assert.match(retrying!, /:retrying$/);

      h.clock.set(settledAt + h.config.retention.eventsMs);
      await h.runtime.runJob('prune-events');
      assert.deepEqual(await ok.history(), [done], 'exactly a retention after its last attempt: still listed');
      const replayed = await ok.replay(doneId);
      assert.equal(replayed.status, 202, replayed.text);
      await h.work();

      h.clock.advance(1);
      const r = await h.runtime.runJob('prune-events');
      assert.ok(Number(r.deleted) >= 2, `the delivery and its attempt: ${JSON.stringify(r)}`);
      assert.deepEqual(await ok.history(), [`${replayed.json.delivery_id}:succeeded`], 'only the replay is left');
      assert.equal((await ok.replay(doneId)).status, 404);
      const still = await failing.history();
      assert.equal(still.length, 1);
      assert.equal(still[0]!.split(':')[0], retrying!.split(':')[0]);
      assert.doesNotMatch(still[0]!, /:succeeded$/);
    });
  });
}
