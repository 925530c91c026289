// Every dashboard action and its operator audit row commit together, on SQLite and PostgreSQL, against the real app
// on a real port: while the audit log's table is away (a real database failure, no mock) each action fails and
// leaves nothing behind (no hook, no test event, no replay, no deletion, no withdrawal, no reminder); with the table
// back the action happens and its row reads as it always has.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withAuditLogAway } from '../audit/testing/away.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { signedIn, type DashboardClient } from './testing/client.js';

const databases = await bothDatabases();
const PDF = b64(await makePdf({ pages: 1, text: [['Audit']] }));

for (const d of databases) {
  describe(`dashboard actions and their audit rows (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let owner: DashboardClient;
    let actor: string;
    before(async () => {
      e = await startE2E({ database: d.database });
      const s = await signedIn(e.h, e.workspaceId, 'owner');
      owner = s.client;
      actor = `user:${s.email}`;
    });
    after(() => e?.close());

    const db = () => e.h.db.kysely;
    /** A dashboard POST while every audit_log insert fails: the action must fail with it (500). */
    async function refusedWithoutAudit(path: string, form?: Record<string, string>) {
      const r = await withAuditLogAway(db(), () => owner.post(path, form));
      assert.equal(r.status, 500, `${path}: ${r.status}`);
    }
    const rowsAbout = (targetId: string) =>
      db()
        .selectFrom('audit_log')
        .select(['actor', 'action', 'target_id', 'detail'])
        .where('workspace_id', '=', e.workspaceId)
        .where('target_id', '=', targetId)
        .orderBy('id')
        .execute();
    const row = (action: string, targetId: string, detail: unknown = undefined) => ({
      actor,
      action,
      target_id: targetId,
      detail: detail === undefined ? null : JSON.stringify(detail),
    });
    async function apiHook(name: string) {
      const r = await e.api('POST', '/v1/hooks', { target_url: e.rx.url(`/${name}`) });
      assert.equal(r.status, 201, r.text);
      return r.json.id as string;
    }
    const deliveriesOf = (hookId: string) =>
      db().selectFrom('deliveries').select(['id', 'event_id']).where('hook_id', '=', hookId).execute();
    async function send(title: string) {
      const email = `${title.replace(/\W/g, '.')}.${Math.random().toString(36).slice(2, 8)}@example.com`;
      const r = await e.api('POST', '/v1/signing-requests', {
        title,
        signers: [{ role: 'signer', email, name: 'Sam Signer' }],
        file: { name: 'a.pdf', content_base64: PDF },
        placement: 'auto_append',
      });
      assert.equal(r.status, 201, r.text);
      return { id: r.json.document_id as string, requestId: r.json.signing_requests[0].id as string, email };
    }

    test('hook.created: no hook without its row', async () => {
      const url = e.rx.url('/created');
      const form = { target_url: url, events: 'signing_request.signed' };
      const hooks = () =>
        db().selectFrom('hooks').select('id').where('workspace_id', '=', e.workspaceId).where('target_url', '=', url);
      await owner.get('/dashboard/developers/webhooks');
      await refusedWithoutAudit('/dashboard/developers/webhooks', form);
      assert.deepEqual(await hooks().execute(), []);
      assert.equal((await owner.post('/dashboard/developers/webhooks', form)).status, 201);
      const { id } = await hooks().executeTakeFirstOrThrow();
      const detail = { target_url: url, events: ['signing_request.signed'] };
      assert.deepEqual(await rowsAbout(id), [row('hook.created', id, detail)]);
    });

    test('hook.test_sent: no test event without its row', async () => {
      const id = await apiHook('tested');
      await owner.get(`/dashboard/developers/webhooks/${id}`);
      await refusedWithoutAudit(`/dashboard/developers/webhooks/${id}/test`);
      assert.deepEqual(await deliveriesOf(id), []);
      assert.equal((await owner.post(`/dashboard/developers/webhooks/${id}/test`)).status, 303);
      const [sent] = await deliveriesOf(id);
      assert.deepEqual(await rowsAbout(id), [row('hook.test_sent', id, { event_id: sent!.event_id })]);
    });

    test('delivery.replayed: no replay without its row', async () => {
      const hookId = await apiHook('replayed');
      assert.equal((await e.api('POST', `/v1/hooks/${hookId}/test`)).status, 202);
      const [first] = await deliveriesOf(hookId);
      const path = `/dashboard/developers/webhooks/${hookId}/deliveries/${first!.id}/replay`;
      await owner.get(`/dashboard/developers/webhooks/${hookId}`);
      await refusedWithoutAudit(path);
      assert.deepEqual(await deliveriesOf(hookId), [first]);
      assert.equal((await owner.post(path)).status, 303);
      const replayed = (await deliveriesOf(hookId)).find((x) => x.id !== first!.id)!;
      const detail = { delivery_id: replayed.id, event_id: first!.event_id, hook_id: hookId };
      assert.deepEqual(await rowsAbout(first!.id), [row('delivery.replayed', first!.id, detail)]);
    });

    test('hook.deleted: no deletion without its row', async () => {
      const id = await apiHook('deleted');
      const deletedAt = async () =>
        (await db().selectFrom('hooks').select('deleted_at').where('id', '=', id).executeTakeFirstOrThrow()).deleted_at;
      await owner.get(`/dashboard/developers/webhooks/${id}/delete`);
      await refusedWithoutAudit(`/dashboard/developers/webhooks/${id}/delete`);
      assert.equal(await deletedAt(), null);
      assert.equal((await owner.post(`/dashboard/developers/webhooks/${id}/delete`)).status, 303);
      assert.notEqual(await deletedAt(), null);
      assert.deepEqual(await rowsAbout(id), [row('hook.deleted', id)]);
    });

    test('document.withdrawn: no withdrawal (nor its audit-trail entry) without its row', async () => {
      const doc = await send('Withdraw me');
      const path = `/dashboard/documents/${doc.id}/withdraw`;
      await owner.get(path);
      await refusedWithoutAudit(path);
      assert.equal((await e.api('GET', `/v1/documents/${doc.id}`)).json.status, 'in_progress');
      const trail = async () =>
        (await e.api('GET', `/v1/documents/${doc.id}/audit-trail`)).json.entries.map(
          (x: { action: string }) => x.action,
        );
      assert.ok(!(await trail()).includes('document.withdrawn'), 'no audit-trail entry either');
      const r = await owner.post(path);
      assert.equal(r.headers.location, `/dashboard/documents/${doc.id}?done=withdrawn`);
      assert.equal((await e.api('GET', `/v1/documents/${doc.id}`)).json.status, 'withdrawn');
      assert.ok((await trail()).includes('document.withdrawn'), 'the audit-trail entry');
      assert.deepEqual(await rowsAbout(doc.id), [row('document.withdrawn', doc.id, { title: 'Withdraw me' })]);
    });

    test('signing_request.reminded: no reminder without its row', async () => {
      const doc = await send('Remind me');
      await e.work();
      const path = `/dashboard/documents/${doc.id}/requests/${doc.requestId}/remind`;
      await owner.get(`/dashboard/documents/${doc.id}`);
      await refusedWithoutAudit(path);
      await e.work();
      assert.equal((await e.linksFor(doc.email)).length, 1, 'no second mail');
      const r = await owner.post(path);
      assert.equal(r.headers.location, `/dashboard/documents/${doc.id}?done=reminded`);
      await e.work();
      assert.equal((await e.linksFor(doc.email)).length, 2);
      const detail = { document_id: doc.id, to: doc.email };
      assert.deepEqual(await rowsAbout(doc.requestId), [row('signing_request.reminded', doc.requestId, detail)]);
    });
  });
}
