// Delivery history through the API under the events retention, on both databases: the real app on a real port and
// a real receiver, the clock moved to the boundary. A settled delivery is listed and replayable for the whole
// retention after its last attempt, and gone (404 on replay) a millisecond later; a retrying one is never pruned. A
// document's callback hook leaves GET /v1/hooks the events retention after its document ended, not before, and not
// while a delivery to it is still open; an in-progress document's stays.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startHarness, type Harness } from '../testing/harness.js';
import { startReceiver, type Receiver } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { plainPdf, signers } from '../signing/testing/requests.js';

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

    test('a callback hook is retired the retention after its document ended, unless a delivery to it is open', async () => {
      const t = await h.tenant();
      const send = async (path: string, accepting: boolean) => {
        const r = await h.request('POST', '/v1/signing-requests', {
          token: t.token,
          body: {
            signers: signers(1),
            file: { name: 'a.pdf', content_base64: await plainPdf(1) },
            placement: 'auto_append',
            callback_url: rx.url(path),
          },
        });
        assert.equal(r.status, 201, r.text);
        if (accepting) rx.secrets.set(path, r.json.callback.secret);
        return { doc: r.json.document_id as string, hook: r.json.callback.hook_id as string };
      };
      const tag = randomBytes(4).toString('hex');
      const ended = await send(`/cb-ended-${tag}`, true);
      const failing = await send(`/cb-failing-${tag}`, false);
      const open = await send(`/cb-open-${tag}`, true);
      for (const d of [ended, failing]) {
        const w = await h.request('POST', `/v1/documents/${d.doc}/withdraw`, { token: t.token });
        assert.ok(w.status < 300, w.text);
      }
      const endedAt = h.clock.now();
      await h.work();
      const listed = async () =>
        ((await h.request('GET', '/v1/hooks', { token: t.token })).json as { id: string }[]).map((x) => x.id).sort();
      const all = [ended.hook, failing.hook, open.hook].sort();
      assert.deepEqual(await listed(), all);

      h.clock.set(endedAt + h.config.retention.eventsMs);
      await h.runtime.runJob('prune-events');
      assert.deepEqual(await listed(), all, 'exactly a retention after the end: still listed');
      h.clock.advance(1);
      await h.runtime.runJob('prune-events');
      assert.deepEqual(await listed(), [failing.hook, open.hook].sort(), 'the ended document’s hook is retired');
      const row = await h.db.kysely
        .selectFrom('hooks')
        .select(['deleted_at'])
        .where('id', '=', ended.hook)
        .executeTakeFirstOrThrow();
      assert.equal(row.deleted_at, h.clock.now(), 'retired, not deleted');
    });
  });
}
