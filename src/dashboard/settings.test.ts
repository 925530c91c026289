// The dashboard's Settings page over HTTP, on SQLite and PostgreSQL, against the real app on a real port: an owner
// sets the workspace's default reminders (refused out of bounds, with nothing saved), members look but cannot change
// them (403), each change leaves its audit-log row, and new signing requests that name no reminders take the default
// as it is at creation; `reminders: null` and an explicit policy win over it; turning it off leaves sent requests alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { signedIn, type DashboardClient } from './testing/client.js';

const databases = await bothDatabases();
const PDF = b64(await makePdf({ text: [['Agreement']] }));
const DAY = 86_400_000;

for (const d of databases) {
  describe(`dashboard settings: default reminders (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let owner: DashboardClient;
    let ownerEmail: string;
    let member: DashboardClient;
    before(async () => {
      e = await startE2E({ database: d.database });
      ({ client: owner, email: ownerEmail } = await signedIn(e.h, e.workspaceId, 'owner'));
      ({ client: member } = await signedIn(e.h, e.workspaceId, 'member'));
    });
    after(() => e?.close());

    const send = async (reminders?: unknown) => {
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: [{ role: 'a', email: `s.${Math.random().toString(36).slice(2, 8)}@example.com`, name: 'S' }],
        file: { name: 'a.pdf', content_base64: PDF },
        placement: 'auto_append',
        ...(reminders !== undefined ? { reminders } : {}),
      });
      assert.equal(r.status, 201, r.text);
      return r.json;
    };
    const auditRows = () =>
      e.h.db.kysely
        .selectFrom('audit_log')
        .selectAll()
        .where('workspace_id', '=', e.workspaceId)
        .where('action', '=', 'workspace.reminders_set')
        .orderBy('id')
        .execute();

    test('owner sets the default; bounds refused; members 403; audit rows; new requests take it', async () => {
      const page = await owner.get('/dashboard/settings');
      assert.equal(page.status, 200);
      assert.match(page.text, /Now: no automatic reminders\./);
      assert.match(page.text, /href="\/dashboard\/settings" aria-current="page"/);
      assert.equal((await send()).reminders, null, 'no default yet');

      const bad = await owner.post('/dashboard/settings/reminders', {
        enabled: 'on',
        after_days: '0',
        every_days: '2',
      });
      assert.equal(bad.status, 400);
      assert.match(
        bad.text,
        /id="after-days-error">First reminder: enter whole days from 1 to 60\./,
        'beside its field',
      );
      assert.match(bad.text, /name="after_days"[^>]*aria-invalid="true" aria-describedby="after-days-error"/);
      assert.doesNotMatch(bad.text, /name="every_days"[^>]*aria-invalid/, 'only the field at fault');
      assert.match(bad.text, /name="after_days"[^>]*value="0"/, 'the form keeps what was typed');
      await owner.get('/dashboard/settings');
      const bad2 = await owner.post('/dashboard/settings/reminders', {
        enabled: 'on',
        after_days: '3',
        every_days: '31',
      });
      assert.equal(bad2.status, 400);
      assert.match(bad2.text, /Repeat: enter whole days from 1 to 30\./);
      assert.equal((await auditRows()).length, 0, 'nothing saved');

      const look = await member.get('/dashboard/settings');
      assert.equal(look.status, 200);
      assert.doesNotMatch(look.text, /action="\/dashboard\/settings\/reminders"/, 'members get no form');
      const denied = await member.post('/dashboard/settings/reminders', {
        enabled: 'on',
        after_days: '3',
        every_days: '2',
      });
      assert.equal(denied.status, 403);

      await owner.get('/dashboard/settings');
      const ok = await owner.post('/dashboard/settings/reminders', { enabled: 'on', after_days: '3', every_days: '2' });
      assert.equal(ok.status, 303);
      assert.equal(ok.headers.location, '/dashboard/settings?saved=1');
      const shown = await owner.get('/dashboard/settings?saved=1');
      assert.match(shown.text, /Now: the first reminder 3 days after the invitation, then every 2 days\./);
      assert.match(shown.text, /Reminder settings saved\./);
      const rows = await auditRows();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.actor, `user:${ownerEmail}`);
      assert.deepEqual(JSON.parse(rows[0]!.detail!), { reminders: { after_days: 3, every_days: 2 } });

      const taken = await send();
      assert.deepEqual(taken.reminders, { after_days: 3, every_days: 2 });
      assert.equal((await send(null)).reminders, null, 'null turns them off for one request');
      assert.deepEqual((await send({ after_days: 5, every_days: 7 })).reminders, { after_days: 5, every_days: 7 });
      const doc = await e.api('GET', `/v1/documents/${taken.document_id}`);
      assert.deepEqual(doc.json.reminders, { after_days: 3, every_days: 2 });

      // Off again: later requests get none, the one sent keeps its own and is reminded on day 3.
      await owner.get('/dashboard/settings');
      const off = await owner.post('/dashboard/settings/reminders', { after_days: '3', every_days: '2' });
      assert.equal(off.status, 303);
      assert.match((await owner.get('/dashboard/settings')).text, /Now: no automatic reminders\./);
      assert.deepEqual(JSON.parse((await auditRows())[1]!.detail!), { reminders: null });
      assert.equal((await send()).reminders, null);
      e.h.clock.advance(3 * DAY);
      const run = await e.h.runtime.runJob('send-reminders');
      assert.equal(run.sent, 1, 'only the request that took the default (5-day one not yet due)');
      const outbox = await e.h.db.kysely
        .selectFrom('mail_outbox')
        .select(['document_id'])
        .where('template', '=', 'reminder')
        .execute();
      assert.deepEqual(
        outbox.map((m) => m.document_id),
        [taken.document_id],
      );
    });
  });
}
