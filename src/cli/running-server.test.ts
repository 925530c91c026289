// The commands whose effect must be immediate, against a real `signet serve` child on a loopback port.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createKey } from '../keys/keys.repo.js';
import {
  ISO_MS,
  cliDataDir,
  oneErrorLine,
  oneJson,
  startReceiver,
  startServer,
  verifySignature,
  type Server,
} from './testing/cli.js';

describe('signet CLI', () => {
  const cli = cliDataDir();
  const { signet, seedKey } = cli;

  describe('against a running server', () => {
    let server: Server;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let main: Awaited<ReturnType<typeof seedKey>>;

    before(async () => {
      receiver = await startReceiver();
      main = await seedKey('Live');
      // No worker in this process: only the CLI's --now delivers, so what the receiver sees is the CLI's doing.
      server = await startServer(cli.dir, ['--no-worker']);
    });
    after(async () => {
      if (server) {
        // A server that does not stop on SIGTERM fails the test above; here it must not hang the run as well.
        const kill = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
        await server.stop();
        clearTimeout(kill);
      }
      if (receiver) await receiver.close();
    });

    test('key revoke is immediate: 200 before, 401 invalid_key on the very next request; who and when are listed', async () => {
      const k = await createKey(cli.db.kysely, { workspaceId: main.ws.id, legacy: true }, Date.now());
      assert.equal((await server.call('GET', '/v1/hooks', k.plaintext)).status, 200);
      assert.equal((await server.call('GET', '/v1/me', k.plaintext)).status, 200);
      const revoked = await signet(['key', 'revoke', k.key.id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.match(revoked.stdout, new RegExp(`^revoked ${k.key.id} at \\S+ by cli:`));
      for (const p of ['/v1/hooks', '/v1/me']) {
        const r = await server.call('GET', p, k.plaintext);
        assert.equal(r.status, 401, p);
        assert.deepEqual(r.json, { error: r.json.error, code: 'invalid_key' });
      }
      // The workspace's other key is untouched (rotation).
      assert.equal((await server.call('GET', '/v1/hooks', main.plaintext)).status, 200);
      const listed = oneJson(await signet(['key', 'list', '--workspace', main.ws.id, '--json']), 'key list');
      const row = listed.keys.find((x: { id: string }) => x.id === k.key.id);
      assert.match(row.revoked_by, /^cli:.+/);
      assert.match(row.revoked_at, ISO_MS);
      assert.ok(
        Math.abs(Date.parse(row.revoked_at) - Date.now()) < 300_000,
        'Math.abs(Date.parse(row.revoked_at) - Date.now()) < 300_000',
      );
      assert.equal(listed.keys.find((x: { id: string }) => x.id === main.id).revoked_at, null);
    });

    test('key set-limit 5: the running server answers 5 requests and refuses the 6th with 429', async () => {
      const k = await createKey(cli.db.kysely, { workspaceId: main.ws.id, legacy: false }, Date.now());
      const [set, zero] = await Promise.all([
        signet(['key', 'set-limit', k.key.id, '5', '--json']),
        signet(['key', 'set-limit', k.key.id, '0', '--json']),
      ]);
      assert.deepEqual(oneJson(set, 'set-limit'), { key_id: k.key.id, rate_limit: 5 });
      oneErrorLine(zero, 'set-limit 0');
      for (let i = 1; i <= 5; i++) {
        const r = await server.call('GET', '/v1/hooks', k.plaintext);
        assert.equal(r.status, 200, `request ${i}`);
        assert.equal(r.headers['ratelimit-limit'], '5');
        assert.equal(r.headers['ratelimit-remaining'], String(5 - i));
      }
      const sixth = await server.call('GET', '/v1/hooks', k.plaintext);
      assert.equal(sixth.status, 429);
      assert.deepEqual(sixth.json, { error: sixth.json.error, code: 'rate_limited' });
      assert.equal(sixth.headers['ratelimit-remaining'], '0');
      assert.ok(Number(sixth.headers['retry-after']) >= 1, "Number(sixth.headers['retry-after']) >= 1");
      // /v1/me is exempt.
      assert.equal((await server.call('GET', '/v1/me', k.plaintext)).status, 200);
    });

    test('key set-ips takes effect on the running server at once', async () => {
      const k = await createKey(cli.db.kysely, { workspaceId: main.ws.id, legacy: false }, Date.now());
      oneJson(await signet(['key', 'set-ips', k.key.id, '10.0.0.0/8', '--json']), 'set-ips');
      const refused = await server.call('GET', '/v1/hooks', k.plaintext);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.json, { error: refused.json.error, code: 'ip_not_allowed', ip: '127.0.0.1' });
      oneJson(await signet(['key', 'set-ips', k.key.id, '127.0.0.0/30', '--json']), 'set-ips');
      assert.equal((await server.call('GET', '/v1/hooks', k.plaintext)).status, 200);
    });

    test('hooks test --now sends the synthetic event; deliveries list shows the attempt; replay --now re-sends the same event', async () => {
      const created = await server.call('POST', '/v1/hooks', main.plaintext, { target_url: receiver.url, events: [] });
      assert.equal(created.status, 201);
      const hook = created.json;
      receiver.statuses.push(500); // the first attempt fails, so the delivery is retrying with a next attempt

      const sent = oneJson(await signet(['hooks', 'test', hook.id, '--now', '--json']), 'hooks test');
      assert.deepEqual(Object.keys(sent).sort(), ['event_id', 'hook_id']);
      assert.equal(sent.hook_id, hook.id);
      assert.match(sent.event_id, /^evt_[0-9a-f]{32}$/);
      assert.equal(receiver.received.length, 1, 'delivered before the command returned');
      const first = receiver.received[0]!;
      const body = JSON.parse(first.body);
      assert.equal(body.event, 'signing_request.sent');
      assert.equal(body.event_id, sent.event_id);
      assert.equal(body.test, true);
      assert.equal(body.signing_request_id, 'req_test_synthetic');
      assert.equal(body.document_id, 'doc_test_synthetic');
      assert.equal(body.workspace_id, main.ws.id);
      assert.match(body.created_at, ISO_MS);
      assert.equal(first.headers['user-agent'], 'service-webhooks/1.0');
      assert.equal(first.headers['x-service-event-id'], sent.event_id);
      assert.equal(first.headers['x-service-event'], 'signing_request.sent');
      assert.equal(first.headers['x-legacy-signature'], first.headers['x-service-signature']);
      verifySignature(String(first.headers['x-service-signature']), hook.secret, first.body);

      const listed = oneJson(await signet(['deliveries', 'list', '--hook', hook.id, '--json']), 'deliveries list');
      assert.deepEqual(Object.keys(listed), ['deliveries']);
      assert.equal(listed.deliveries.length, 1);
      const d = listed.deliveries[0];
      assert.equal(d.hook_id, hook.id);
      assert.equal(d.event_id, sent.event_id);
      assert.equal(d.event, 'signing_request.sent');
      assert.equal(d.status, 'retrying');
      assert.equal(d.attempts, 1);
      assert.equal(d.last_status_code, 500);
      assert.equal(d.attempts_log.length, 1);
      assert.equal(d.attempts_log[0].attempt, 1);
      assert.equal(d.attempts_log[0].status_code, 500);
      assert.match(d.next_attempt_at, ISO_MS);
      // Attempt 2 is due one minute after attempt 1 failed.
      const gap = Date.parse(d.next_attempt_at) - Date.parse(d.attempts_log[0].started_at);
      assert.ok(
        gap >= 60_000 && gap <= 60_000 + d.attempts_log[0].duration_ms + 1_000,
        `next attempt ${gap} ms after the first`,
      );

      const [replayRun, noHook, noDelivery] = await Promise.all([
        signet(['deliveries', 'replay', d.id, '--now', '--json']),
        signet(['hooks', 'test', 'hook_nope', '--now', '--json']),
        signet(['deliveries', 'replay', 'del_nope', '--now', '--json']),
      ]);
      assert.match(oneErrorLine(noHook, 'unknown hook'), /hook_nope/);
      assert.match(oneErrorLine(noDelivery, 'unknown delivery'), /del_nope/);
      const replayed = oneJson(replayRun, 'deliveries replay');
      assert.deepEqual(Object.keys(replayed), ['delivery']);
      assert.notEqual(replayed.delivery.id, d.id);
      assert.equal(replayed.delivery.event_id, sent.event_id);
      assert.equal(replayed.delivery.status, 'succeeded');
      assert.equal(replayed.delivery.attempts, 1);
      assert.equal(replayed.delivery.next_attempt_at, null);
      assert.equal(receiver.received.length, 2);
      const second = receiver.received[1]!;
      assert.equal(second.headers['x-service-event-id'], sent.event_id, 'the same event id again, so receivers dedupe');
      assert.equal(second.body, first.body, 'the same body byte for byte');
      verifySignature(String(second.headers['x-service-signature']), hook.secret, second.body);

      // The original delivery is still retrying (nothing runs a worker here); the replay is its own row.
      const rows = await cli.db.kysely
        .selectFrom('deliveries')
        .select(['id', 'status', 'event_id'])
        .where('hook_id', '=', hook.id)
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.id, r.status, r.event_id]).sort(),
        [
          [d.id, 'retrying', sent.event_id],
          [replayed.delivery.id, 'succeeded', sent.event_id],
        ].sort(),
      );
    });

    test('SIGTERM stops the server with exit 0, and last-used data reaches key list', async () => {
      const e = await server.stop();
      assert.deepEqual({ code: e.code, signal: e.signal }, { code: 0, signal: null });
      const listed = oneJson(await signet(['key', 'list', '--workspace', main.ws.id, '--json']), 'key list');
      const row = listed.keys.find((x: { id: string }) => x.id === main.id);
      assert.match(row.last_used_at, ISO_MS);
      assert.equal(row.last_used_ip, '127.0.0.x');
    });
  });
});
