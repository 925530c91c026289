// The dashboard's "Delete permanently" and the retention setting over HTTP, on SQLite and PostgreSQL, against the
// real app: the button shows on an ended document only, to owners and admins; its confirmation page is a plain
// form (no script); the purge is the API's own, recorded with the person as actor, and lands on the list with a
// notice; members are refused (403). Settings: owners set and clear the retention, out-of-range days are refused
// beside the field with nothing saved.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { signedIn, type DashboardClient } from './testing/client.js';

const databases = await bothDatabases();
const PDF = b64(await makePdf({ pages: 1, text: [['Mutual NDA']] }));

for (const d of databases) {
  describe(`dashboard purge and retention (${d.name})`, { skip: d.skip }, () => {
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

    const send = async (title: string) => {
      const r = await e.api('POST', '/v1/signing-requests', {
        title,
        signers: [{ role: 'a', email: `p.${Math.random().toString(36).slice(2, 8)}@example.com`, name: 'P' }],
        file: { name: 'nda.pdf', content_base64: PDF },
        placement: 'auto_append',
      });
      assert.equal(r.status, 201, r.text);
      return r.json.document_id as string;
    };

    test('Delete permanently: ended documents only, a confirmation form, the API’s purge, owners and admins only', async () => {
      const id = await send('Purge from the dashboard');
      const open = await owner.get(`/dashboard/documents/${id}`);
      assert.doesNotMatch(open.text, /Delete permanently/, 'not while in progress');
      const early = await owner.post(`/dashboard/documents/${id}/purge`);
      assert.equal(early.headers.location, `/dashboard/documents/${id}?refused=purge`);
      assert.match((await owner.get(early.headers.location!)).text, /Not deleted: only a document that has ended/);

      assert.equal((await e.api('POST', `/v1/documents/${id}/withdraw`)).status, 200);
      const page = await owner.get(`/dashboard/documents/${id}`);
      assert.match(page.text, new RegExp(`href="/dashboard/documents/${id}/purge"[^>]*>Delete permanently…<`));
      const memberPage = await member.get(`/dashboard/documents/${id}`);
      assert.doesNotMatch(memberPage.text, /Delete permanently/, 'members are not offered it');
      assert.equal((await member.get(`/dashboard/documents/${id}/purge`)).status, 403);
      assert.equal((await member.post(`/dashboard/documents/${id}/purge`)).status, 403);

      const confirm = await owner.get(`/dashboard/documents/${id}/purge`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, /Delete this document permanently\?/);
      assert.match(confirm.text, new RegExp(`<form method="post" action="/dashboard/documents/${id}/purge">`));
      const done = await owner.post(`/dashboard/documents/${id}/purge`);
      assert.equal(done.status, 303);
      assert.equal(done.headers.location, '/dashboard/documents?done=purged');
      assert.match((await owner.get(done.headers.location!)).text, /Document deleted permanently\./);
      assert.equal((await e.api('GET', `/v1/documents/${id}`)).status, 404);
      assert.equal((await owner.get(`/dashboard/documents/${id}`)).status, 404);
      const rows = await e.h.db.kysely
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'document.purged')
        .where('target_id', '=', id)
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.actor, JSON.parse(r.detail!)]),
        [[`user:${ownerEmail}`, { reason: 'request', ended_status: 'withdrawn' }]],
      );
      // The API still answers with the tombstone.
      assert.equal((await e.api('DELETE', `/v1/documents/${id}`)).json.status, 'purged');
    });

    test('Settings: retention set, refused out of range, cleared; members look only', async () => {
      await owner.get('/dashboard/settings');
      const bad = await owner.post('/dashboard/settings/retention', { retention_days: '0' });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /id="retention-error">Retention: enter whole days from 1 to 36500, or leave it empty\./);
      const look = await member.get('/dashboard/settings');
      assert.doesNotMatch(look.text, /action="\/dashboard\/settings\/retention"/, 'members get no form');
      assert.equal((await member.post('/dashboard/settings/retention', { retention_days: '3' })).status, 403);
      await owner.get('/dashboard/settings');
      const ok = await owner.post('/dashboard/settings/retention', { retention_days: '90' });
      assert.equal(ok.headers.location, '/dashboard/settings?retention=1');
      const shown = await owner.get(ok.headers.location!);
      assert.match(shown.text, /Now: ended documents are deleted permanently 90 days after they ended\./);
      assert.match(shown.text, /Retention saved\./);
      await owner.post('/dashboard/settings/retention', { retention_days: '' });
      assert.match((await owner.get('/dashboard/settings')).text, /Now: ended documents are kept until someone/);
      const rows = await e.h.db.kysely
        .selectFrom('audit_log')
        .selectAll()
        .where('workspace_id', '=', e.workspaceId)
        .where('action', '=', 'workspace.retention_set')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        rows.map((r) => JSON.parse(r.detail!)),
        [{ retention_days: 90 }, { retention_days: null }],
      );
    });
  });
}
