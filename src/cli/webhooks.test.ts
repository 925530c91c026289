// `signet deliveries list|replay` and `hooks test` without a server: --now delivers from the command's own process.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Run } from '../testing/child-server.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { createHook, deleteHook } from '../webhooks/hooks.repo.js';
import { cliDataDir, oneErrorLine, oneJson, startReceiver } from './testing/cli.js';

describe('signet CLI', () => {
  const cli = cliDataDir();
  const { signet } = cli;

  test('deliveries list --status filters by state (failed = retrying and giving_up); replay refuses a deleted hook', async () => {
    const receiver = await startReceiver();
    try {
      receiver.statuses.push(500);
      const ws = await createWorkspace(cli.db.kysely, { name: 'Deliveries', tier: 'business' }, Date.now());
      const hook = await createHook(
        cli.db.kysely,
        { workspaceId: ws.id, targetUrl: receiver.url, events: [], source: 'api' },
        Date.now(),
      );
      oneJson(await signet(['hooks', 'test', hook.id, '--now', '--json']), 'hooks test');
      assert.equal(receiver.received.length, 1);
      const [d] = await cli.db.kysely.selectFrom('deliveries').selectAll().where('hook_id', '=', hook.id).execute();
      assert.deepEqual([d!.status, d!.attempts], ['retrying', 1], 'failed once, waiting for attempt 2');

      const ids = (r: Run, label: string) => oneJson(r, label).deliveries.map((x: { id: string }) => x.id);
      const list = (...more: string[]) => signet(['deliveries', 'list', '--hook', hook.id, ...more]);
      const [retrying, failed, succeeded, pending, bogus, human] = await Promise.all([
        list('--status', 'retrying', '--json'),
        list('--status', 'failed', '--json'),
        list('--status', 'succeeded', '--json'),
        list('--status', 'pending', '--json'),
        list('--status', 'bogus', '--json'),
        list('--status', 'retrying'),
      ]);
      assert.deepEqual(ids(retrying, 'retrying'), [d!.id]);
      assert.deepEqual(ids(failed, 'failed'), [d!.id]);
      assert.deepEqual(ids(succeeded, 'succeeded'), []);
      assert.deepEqual(ids(pending, 'pending'), []);
      assert.match(
        oneErrorLine(bogus, 'unknown status'),
        /--status must be one of pending\|retrying\|succeeded\|giving_up\|failed$/,
      );
      assert.equal(human.code, 0, human.stderr);
      assert.match(
        human.stdout,
        new RegExp(`^${d!.id}\tsigning_request\\.sent\tretrying\tattempts 1\tnext \\S+\tnon-2xx response: 500\n$`),
      );

      // A deleted hook's deliveries are not replayed: one line on stderr, no row, nothing sent.
      assert.ok(
        await deleteHook(cli.db.kysely, ws.id, hook.id, Date.now()),
        'await deleteHook(cli.db.kysely, ws.id, hook.id, Date.now())',
      );
      const gone = await signet(['deliveries', 'replay', d!.id, '--now', '--json']);
      assert.match(oneErrorLine(gone, 'deleted hook'), new RegExp(`the hook of delivery ${d!.id} is deleted`));
      const rows = await cli.db.kysely.selectFrom('deliveries').select('id').where('hook_id', '=', hook.id).execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [d!.id],
      );
      assert.equal(receiver.received.length, 1, 'nothing sent');
    } finally {
      await receiver.close();
    }
  });
});
