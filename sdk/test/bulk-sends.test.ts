// The SDK's bulk sends against the real server: a CSV dry run names the bad row and creates nothing, the send is
// queued (202) and followed with bulkSends.get to completed; JSON rows too; a bad upload is a SignetError.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignetError } from '../src/index.js';
import { templateBody, VALUES } from '../../src/templates/testing/fixtures.js';
import { bulkCsv } from '../../src/templates/testing/bulk.js';
import { client, h, useRealServer } from './testing/server.js';

describe('@signet/sdk bulk sends against the real server', () => {
  useRealServer();

  test('CSV: dry run names the bad row; the send is queued, then completed with each row’s instance', async () => {
    const { signet } = await client();
    const tpl = await signet.templates.create(
      (await templateBody()) as unknown as Parameters<typeof signet.templates.create>[0],
    );
    const csv = bulkCsv('sdk', 4, { 2: 'email' });

    const dry = await signet.templates.bulkSendDryRun(tpl.id, { csv, version: 1 });
    assert.deepEqual([dry.dry_run.total, dry.dry_run.valid, dry.dry_run.invalid], [4, 3, 1]);
    assert.equal(dry.dry_run.rows[0]!.row, 2);
    assert.equal(dry.dry_run.rows[0]!.problems[0]!.code, 'invalid_email');

    const created = await signet.templates.bulkSend(tpl.id, { csv }, { idempotencyKey: 'bulk-sdk-1' });
    assert.match(created.bulk_send.id, /^bulk_/);
    assert.equal(created.bulk_send.status, 'queued');
    const again = await signet.templates.bulkSend(tpl.id, { csv }, { idempotencyKey: 'bulk-sdk-1' });
    assert.equal(again.bulk_send.id, created.bulk_send.id, 'a retried upload with its key is the same send');

    await h.work();
    const got = await signet.bulkSends.get(created.bulk_send.id);
    const b = got.bulk_send;
    assert.deepEqual([b.status, b.total, b.sent, b.failed], ['completed', 4, 3, 1]);
    assert.deepEqual(
      b.rows.map((r) => [r.row, r.status, Boolean(r.template_instance_id)]),
      [
        [1, 'sent', true],
        [2, 'failed', false],
        [3, 'sent', true],
        [4, 'sent', true],
      ],
    );
    const instance = await signet.templateInstances.get(b.rows[0]!.template_instance_id!);
    assert.equal(instance.id, b.rows[0]!.template_instance_id);
  });

  test('JSON rows, and a CSV with an unknown column is a SignetError naming it', async () => {
    const { signet } = await client();
    const tpl = await signet.templates.create(
      (await templateBody()) as unknown as Parameters<typeof signet.templates.create>[0],
    );
    const rows = [
      {
        recipients: [
          { slot: 'client', name: 'Client Person', email: 'client.json@example.com' },
          { slot: 'provider', name: 'Provider Person', email: 'provider.json@example.com' },
        ],
        field_values: VALUES,
      },
    ];
    const created = await signet.templates.bulkSend(tpl.id, { rows });
    await h.work();
    assert.equal((await signet.bulkSends.get(created.bulk_send.id)).bulk_send.sent, 1);

    await assert.rejects(
      signet.templates.bulkSendDryRun(tpl.id, { csv: 'client.name,colour\nAda,blue\n' }),
      (e: unknown) => e instanceof SignetError && e.status === 400 && /colour/.test(e.message),
    );
    await assert.rejects(
      signet.bulkSends.get('bulk_missing'),
      (e: unknown) => e instanceof SignetError && e.status === 404 && e.code === 'not_found',
    );
  });
});
