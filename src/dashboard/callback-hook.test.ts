// A document's own webhook (`callback_url`) in the dashboard, on SQLite and PostgreSQL, the real app on a real port:
// Developers → Webhooks lists the workspace-wide hooks only (a busy workspace has a callback hook for every document
// sent in the last weeks, while `GET /v1/hooks` keeps the spec's whole list); the document's page shows its live
// callback hook with a link to its deliveries, and the hook's page links back to the document.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { signedIn, type DashboardClient } from './testing/client.js';

const databases = await bothDatabases();
const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;
const PDF = b64(await makePdf({ pages: 1, text: [['Mutual NDA']] }));

for (const d of databases) {
  describe(`a document’s own webhook in the dashboard (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let owner: DashboardClient;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
      ({ client: owner } = await signedIn(e.h, e.workspaceId, 'owner'));
    });
    after(() => e?.close());

    test('a document’s own webhook (callback_url) is on its page, not among the workspace’s webhooks', async () => {
      const ws = await e.h.request('POST', '/v1/hooks', {
        token: e.token,
        body: { target_url: 'http://127.0.0.1:9/workspace-hook', events: [] },
      });
      assert.equal(ws.status, 201, ws.text);
      const r = await e.h.request('POST', '/v1/signing-requests', {
        token: e.token,
        body: {
          title: 'With a callback',
          signers: [{ role: 'client', email: email('cb'), name: 'Zoë Ångström' }],
          file: { name: 'nda.pdf', content_base64: PDF },
          placement: 'auto_append',
          callback_url: 'http://127.0.0.1:9/document-hook',
        },
      });
      assert.equal(r.status, 201, r.text);
      const docId = r.json.document_id as string;
      const hooks = await e.h.request('GET', '/v1/hooks', { token: e.token });
      const callback = (hooks.json as { id: string; document_id: string | null }[]).find(
        (h) => h.document_id === docId,
      );
      assert.ok(callback, 'the API lists the callback hook among the workspace’s hooks (the spec’s list)');

      const list = await owner.get('/dashboard/developers/webhooks');
      assert.equal(list.status, 200);
      assert.match(list.text, /http:\/\/127\.0\.0\.1:9\/workspace-hook/);
      assert.doesNotMatch(list.text, /document-hook/, 'the dashboard lists workspace-wide hooks only');
      assert.match(list.text, /<code>callback_url<\/code>/, 'and says where a document’s own hook is shown');

      const page = await owner.get(`/dashboard/documents/${docId}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Webhook of this document/);
      assert.match(page.text, /<code>http:\/\/127\.0\.0\.1:9\/document-hook<\/code>/);
      assert.ok(page.text.includes(`href="/dashboard/developers/webhooks/${callback.id}"`), 'a link to its deliveries');

      const hookPage = await owner.get(`/dashboard/developers/webhooks/${callback.id}`);
      assert.equal(hookPage.status, 200);
      assert.ok(hookPage.text.includes(`href="/dashboard/documents/${docId}"`), 'the hook’s page links back');

      // Deleted, it leaves the document's page.
      assert.equal((await e.h.request('DELETE', `/v1/hooks/${callback.id}`, { token: e.token })).status, 204);
      assert.doesNotMatch((await owner.get(`/dashboard/documents/${docId}`)).text, /Webhook of this document/);
    });
  });
}
