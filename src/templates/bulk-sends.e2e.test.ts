// Bulk sends end to end through HTTP on the real app, on SQLite and on PostgreSQL: a 200-row CSV with 5 bad rows,
// its dry run (exactly those rows, nothing created), the send (195 instances, 195 first invitations counted at the
// SMTP peer), the same upload retried with its Idempotency-Key (nothing new), JSON rows, the monthly cap, and the
// uploads refused as a whole.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bothDatabases } from '../testing/services.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { templateSteps } from './testing/e2e.js';
import { VALUES } from './testing/fixtures.js';
import { BREAKS, bulkCsv, clientEmail, countRows, mailsTo, type Break } from './testing/bulk.js';
import { MAX_BULK_ROWS } from '../limits.js';

const databases = await bothDatabases();
const BROKEN: Record<number, Break> = { 3: 'email', 41: 'plan', 97: 'name', 150: 'seats', 200: 'cells' };
const CSV = { 'content-type': 'text/csv; charset=utf-8' };

for (const d of databases) {
  describe(`bulk sends end to end (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database, env: { SIGNET_TIER_CAPS: 'starter=3' } });
    });
    after(() => e.close());
    const { newTemplate } = templateSteps(() => e);
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      e.h.request('POST', path, { token: e.token, rawBody: body, headers: { ...CSV, ...headers } });

    test('200 rows, 5 bad: the dry run names exactly them; the send makes 195 instances and 195 invitations', async () => {
      const tpl = await newTemplate();
      const run = Math.random().toString(36).slice(2, 8);
      const csv = bulkCsv(run, 200, BROKEN);

      const dry = await post(`/v1/templates/${tpl.id}/bulk-sends?dry_run=true`, csv);
      assert.equal(dry.status, 200, dry.text);
      assert.deepEqual(
        dry.json.dry_run.rows.map((r: any) => [r.row, r.problems[0].code]),
        Object.entries(BROKEN).map(([row, how]) => [Number(row), BREAKS[how].code]),
      );
      assert.deepEqual([dry.json.dry_run.total, dry.json.dry_run.valid, dry.json.dry_run.invalid], [200, 195, 5]);
      for (const r of dry.json.dry_run.rows) assert.ok(r.problems[0].message.length > 0, `row ${r.row}: a message`);
      await e.work();
      assert.equal(await countRows(e.h.db, 'template_instances', tpl.id), 0, 'a dry run creates no instance');
      assert.equal(await countRows(e.h.db, 'bulk_sends', tpl.id), 0, 'nor a bulk send');

      const key = { 'idempotency-key': `bulk-${run}` };
      const sent = await post(`/v1/templates/${tpl.id}/bulk-sends`, csv, key);
      assert.equal(sent.status, 202, sent.text);
      const bulk = sent.json.bulk_send;
      assert.match(bulk.id, /^bulk_[0-9a-f]{24}$/);
      assert.deepEqual({ ...bulk, id: 0 }, { id: 0, status: 'queued', total: 200, sent: 0, failed: 1 });

      await e.work();
      const got = await e.api('GET', `/v1/bulk-sends/${bulk.id}`);
      assert.equal(got.status, 200, got.text);
      const b = got.json.bulk_send;
      assert.deepEqual([b.status, b.total, b.sent, b.failed, b.rows.length], ['completed', 200, 195, 5, 200]);
      assert.deepEqual(
        b.rows.filter((r: any) => r.status === 'failed').map((r: any) => [r.row, r.problems[0].code]),
        Object.entries(BROKEN).map(([row, how]) => [Number(row), BREAKS[how].code]),
      );
      const ids = b.rows.filter((r: any) => r.status === 'sent').map((r: any) => r.template_instance_id);
      assert.equal(new Set(ids).size, 195, 'one instance per sent row');
      assert.equal(await countRows(e.h.db, 'template_instances', tpl.id), 195);

      // Row 7's instance is row 7's: its client, its values.
      const row7 = await e.api('GET', `/v1/template-instances/${b.rows[6].template_instance_id}`);
      assert.equal(row7.json.recipients[0].email, clientEmail(run, 7));
      const mails = await e.smtp.parsed();
      let invited = 0;
      for (let i = 1; i <= 200; i++) invited += mailsTo(mails, clientEmail(run, i));
      assert.equal(invited, 195, 'one first invitation per sent row');
      assert.equal(mailsTo(mails, `provider.${run}@example.com`), 0, 'the second turn waits');

      const again = await post(`/v1/templates/${tpl.id}/bulk-sends`, csv, key);
      assert.equal(again.status, 202, again.text);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.json.bulk_send.id, bulk.id);
      await e.work();
      assert.equal(await countRows(e.h.db, 'bulk_sends', tpl.id), 1);
      assert.equal(await countRows(e.h.db, 'template_instances', tpl.id), 195, 'the retried upload sent nothing');
      const reused = await post(`/v1/templates/${tpl.id}/bulk-sends?dry_run=true`, csv, key);
      assert.equal(reused.status, 422, 'a dry run is another request than the send');
      assert.equal(reused.json.code, 'idempotency_key_reused');
    });

    test('JSON rows: each an instantiate body; a bad row fails alone with its problems', async () => {
      const tpl = await newTemplate();
      const person = (who: string) => ({ slot: who, name: `${who} person`, email: `${who}@example.com` });
      const rows = [
        { recipients: [person('client'), person('provider')], field_values: VALUES },
        { recipients: [person('client')], field_values: VALUES },
        { recipients: [person('client'), person('provider')], field_values: { ...VALUES, seats: 0 } },
      ];
      const r = await e.api('POST', `/v1/templates/${tpl.id}/bulk-sends`, { rows, version: 1 });
      assert.equal(r.status, 202, r.text);
      await e.work();
      const b = (await e.api('GET', `/v1/bulk-sends/${r.json.bulk_send.id}`)).json.bulk_send;
      assert.deepEqual(
        b.rows.map((x: any) => [x.row, x.status, x.problems?.[0].code]),
        [
          [1, 'sent', undefined],
          [2, 'failed', 'missing_recipients'],
          [3, 'failed', 'out_of_range'],
        ],
      );
      assert.equal(b.rows[2].problems[0].field, 'seats');
    });

    test('the monthly cap: the send stops there, the rows left failed with tier_required', async () => {
      const t = await e.h.tenant('starter');
      const api = (m: string, p: string, body?: unknown) => e.h.request(m, p, { token: t.token, body });
      const tpl = (await api('POST', '/v1/templates', await (await import('./testing/fixtures.js')).templateBody()))
        .json;
      const csv = bulkCsv('cap', 5);
      const dry = await e.h.request('POST', `/v1/templates/${tpl.id}/bulk-sends?dry_run=true`, {
        token: t.token,
        rawBody: csv,
        headers: CSV,
      });
      assert.deepEqual(
        dry.json.dry_run.rows.map((r: any) => [r.row, r.problems[0].code]),
        [
          [4, 'tier_required'],
          [5, 'tier_required'],
        ],
      );
      const r = await e.h.request('POST', `/v1/templates/${tpl.id}/bulk-sends`, {
        token: t.token,
        rawBody: csv,
        headers: CSV,
      });
      assert.equal(r.status, 202, r.text);
      await e.work();
      const b = (await api('GET', `/v1/bulk-sends/${r.json.bulk_send.id}`)).json.bulk_send;
      assert.deepEqual([b.status, b.sent, b.failed], ['failed', 3, 2]);
      assert.deepEqual(
        b.rows.map((x: any) => x.problems?.[0].code ?? x.status),
        ['sent', 'sent', 'sent', 'tier_required', 'tier_required'],
      );
      assert.equal(await countRows(e.h.db, 'template_instances', tpl.id), 3);
    });

    test('refused as a whole: not CSV or JSON, too many rows, unknown template or version, bad header', async () => {
      const tpl = await newTemplate();
      const url = `/v1/templates/${tpl.id}/bulk-sends`;
      const refused = async (r: { status: number; json: any; text: string }, status: number, code: string) => {
        assert.equal(r.status, status, r.text);
        assert.equal(r.json.code, code, r.text);
        assert.ok(r.json.error.length > 0, 'a message');
      };
      await refused(await post(url, 'a,b\n1,2\n', { 'content-type': 'text/plain' }), 400, 'invalid_request');
      await refused(await post(url, bulkCsv('x', MAX_BULK_ROWS + 1)), 400, 'invalid_request');
      const many = Array.from({ length: MAX_BULK_ROWS + 1 }, () => ({ recipients: [] }));
      await refused(await e.api('POST', url, { rows: many }), 400, 'invalid_request');
      await refused(await e.api('POST', url, { rows: [] }), 400, 'invalid_request');
      await refused(
        await post('/v1/templates/tpl_000000000000000000000000/bulk-sends', bulkCsv('x', 2)),
        404,
        'not_found',
      );
      await refused(await post(`${url}?version=9`, bulkCsv('x', 2)), 404, 'version_not_found');
      await refused(await e.api('POST', url, { rows: [{ recipients: [] }], version: 9 }), 404, 'version_not_found');
      const unknown = await post(url, 'client.name,client.email,colour\nA,a@example.com,red\n');
      await refused(unknown, 400, 'invalid_request');
      assert.deepEqual(unknown.json.meta.columns, ['colour']);
      await refused(await post(url, 'client.name,plan\nA,pro\n'), 400, 'invalid_request'); // no client_name column
      await refused(await post(url, 'client.name,"client.email\nA,a@example.com\n'), 400, 'invalid_request');
      await refused(await post(url, bulkCsv('x', 0)), 400, 'invalid_request');
      const latin1 = Buffer.from(`${bulkCsv('x', 1).slice(1)}Jos\xe9,j@example.com\n`, 'latin1');
      await refused(await post(url, latin1 as never), 400, 'invalid_request');
      await refused(await e.api('GET', '/v1/bulk-sends/bulk_000000000000000000000000'), 404, 'not_found');
      assert.equal(await countRows(e.h.db, 'bulk_sends', tpl.id), 0, 'nothing was created');
    });
  });
}
