// Templates and reviews in the dashboard over HTTP, on SQLite and PostgreSQL, against the real app on a real port
// with a real SMTP peer: a PDF's {{…}} markers are offered as fields and version 1 is published through the API's
// createTemplate; a new version with a PDF of another page count is published with a warning; a version's page shows
// its slots, fields, rules and boxes; using a template without review opens a document (its signers mailed), with
// review stages it in "Waiting for review", where it is confirmed or discarded; bad input is refused with a readable
// message and the form keeps what was typed; the audit actor is the person; archive; CSRF and roles on every POST.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { templateBody, templatePdf } from '../templates/testing/fixtures.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { signedIn, type DashboardClient } from './testing/client.js';
import { formFields, rowOf, unescape } from './testing/forms.js';

const databases = await bothDatabases();
const PDF2 = await templatePdf(2);
const PDF3 = await templatePdf(3);

for (const d of databases) {
  describe(`dashboard templates (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let admin: DashboardClient;
    let adminEmail: string;
    let member: DashboardClient;
    let memberEmail: string;
    let tplId: string;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
      ({ client: admin, email: adminEmail } = await signedIn(e.h, e.workspaceId, 'admin'));
      ({ client: member, email: memberEmail } = await signedIn(e.h, e.workspaceId, 'member'));
    });
    after(() => e?.close());

    const operatorAudit = (action: string) =>
      e.h.db.kysely
        .selectFrom('audit_log')
        .select(['actor', 'target_id', 'detail'])
        .where('workspace_id', '=', e.workspaceId)
        .where('action', '=', action)
        .execute();

    test('create: the PDF’s markers are offered as fields; version 1 is published as the person', async () => {
      assert.equal((await admin.get('/dashboard/templates/new')).status, 200);
      const up = await admin.postMultipart(
        '/dashboard/templates/new',
        { name: 'Services' },
        { pdf: { name: 'agreement.pdf', content: PDF2, type: 'application/pdf' } },
      );
      assert.equal(up.status, 200, up.text.slice(0, 500));
      assert.match(up.text, /7 markers found in <code>agreement\.pdf<\/code>/);
      const f = formFields(up.text);
      for (const m of ['client_name', 'plan', 'seats', 'start_date', 'sig_client', 'sig_provider', 'client_note'])
        assert.equal(f[`f.${rowOf(f, m)}.anchor`], `{{${m}}}`, `${m} offered with its marker`);
      assert.equal(f[`f.${rowOf(f, 'sig_client')}.type`], 'signature');
      assert.equal(f[`f.${rowOf(f, 'sig_client')}.slot`], 'client');
      assert.equal(f[`f.${rowOf(f, 'start_date')}.type`], 'date');
      assert.match(f.upload!, /^upload-[a-p]{24}\/[0-9a-f]{32}$/);
      // The person edits what the markers suggested: a choice, a number, the note for the client.
      const plan = rowOf(f, 'plan');
      f[`f.${plan}.type`] = 'enum';
      f[`f.${plan}.options`] = 'basic, pro';
      const seats = rowOf(f, 'seats');
      f[`f.${seats}.type`] = 'number';
      delete f[`f.${seats}.required`];
      f[`f.${rowOf(f, 'client_note')}.slot`] = 'client';
      f[`f.${rowOf(f, 'client_name')}.max_length`] = '80';
      f['s.1.order'] = '2';

      // Bad input first: an invalid key is refused readably, and the form keeps every typed value.
      const bad = { ...f, [`f.${rowOf(f, 'client_name')}.key`]: 'client name!' };
      const refused = await admin.postMultipart('/dashboard/templates/new', bad);
      assert.equal(refused.status, 400);
      assert.match(refused.text, /Nothing was published or sent/);
      assert.match(unescape(refused.text), /fields\[0\]\.key must match pattern/);
      assert.match(refused.text, /value="client name!"/, 'the typed key is kept');
      assert.match(refused.text, /value="basic, pro"/, 'the typed options are kept');

      const ok = await admin.postMultipart('/dashboard/templates/new', f);
      assert.equal(ok.status, 303, ok.text.slice(0, 800));
      const m = /^\/dashboard\/templates\/(tpl_[0-9a-f]+)\?done=created$/.exec(ok.headers.location ?? '');
      assert.ok(m, `redirected to the template: ${ok.headers.location}`);
      tplId = m[1]!;
      const api = await e.api('GET', `/v1/templates/${tplId}`);
      assert.equal(api.status, 200);
      assert.equal(api.json.current_version, 1);
      assert.deepEqual(api.json.slots, [
        { name: 'client', signing_order: 1 },
        { name: 'provider', signing_order: 2 },
      ]);
      const byKey = Object.fromEntries(
        (api.json.fields as { key: string; options?: string[]; max_length?: number }[]).map((x) => [x.key, x]),
      );
      assert.deepEqual(byKey.plan!.options, ['basic', 'pro']);
      assert.equal(byKey.client_name!.max_length, 80);
      assert.deepEqual(await operatorAudit('template.created'), [
        { actor: `user:${adminEmail}`, target_id: tplId, detail: JSON.stringify({ version: 1 }) },
      ]);
    });

    test('list and a version’s page: name, version, last used; slots, fields, rules and boxes', async () => {
      const list = await member.get('/dashboard/templates');
      assert.equal(list.status, 200);
      assert.match(list.text, new RegExp(`href="/dashboard/templates/${tplId}">Services</a>`));
      assert.match(list.text, /never/);
      assert.doesNotMatch(list.text, /New template/, 'a member is not offered to create');
      const page = await member.get(`/dashboard/templates/${tplId}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Version 1 of 1/);
      assert.match(page.text, /Fields of client/);
      assert.match(page.text, /Choices: basic, pro/);
      assert.match(page.text, /page 1: [\d.]+, [\d.]+, [\d.]+ × [\d.]+ pt/);
      assert.doesNotMatch(page.text, /Archive template/, 'a member is not offered to archive');
      assert.equal((await member.get(`/dashboard/templates/${tplId}/versions/1`)).status, 200);
      assert.equal((await member.get(`/dashboard/templates/${tplId}/versions/9`)).status, 404);
      assert.equal((await member.get(`/dashboard/templates/tpl_nope`)).status, 404);
    });

    test('publish v2 with a PDF of another page count: the fields are kept and a warning shown', async () => {
      const form = await admin.get(`/dashboard/templates/${tplId}/publish`);
      assert.equal(form.status, 200);
      const f = formFields(form.text);
      assert.equal(f[`f.${rowOf(f, 'plan')}.options`], 'basic, pro', 'starts from the current version');
      const r = await admin.postMultipart(`/dashboard/templates/${tplId}/publish`, f, {
        pdf: { name: 'agreement-3.pdf', content: PDF3, type: 'application/pdf' },
      });
      assert.equal(r.status, 303, r.text.slice(0, 800));
      assert.equal(r.headers.location, `/dashboard/templates/${tplId}?done=published&pages=changed`);
      const shown = await admin.get(r.headers.location!);
      assert.match(shown.text, /page count or page sizes differ/);
      assert.match(shown.text, /Version 2 of 2/);
      const api = await e.api('GET', `/v1/templates/${tplId}`);
      assert.equal(api.json.current_version, 2);
      assert.equal(api.json.page_count, 3);
      assert.equal(api.json.fields.length, 7);
      assert.deepEqual(
        (await operatorAudit('template.version_published')).map((a) => a.actor),
        [`user:${adminEmail}`],
      );
      // The same PDF again: no warning.
      const same = await admin.postMultipart(`/dashboard/templates/${tplId}/publish`, formFields(form.text));
      assert.equal(same.headers.location, `/dashboard/templates/${tplId}?done=published`);
    });

    test('the visual editor’s PDFs: the kept upload and a version’s original, for this workspace only', async () => {
      const editorData = (html: string) => {
        const json = /<script type="application\/json" id="tpl-editor-data">(.*?)<\/script>/s.exec(html)?.[1];
        assert.ok(json, 'the page carries the editor’s data');
        return JSON.parse(json) as { pdf: string; pages: unknown[]; markers: Record<string, { page: number }> };
      };
      const up = await admin.postMultipart(
        '/dashboard/templates/new',
        { name: 'Drawn' },
        { pdf: { name: 'agreement.pdf', content: PDF2, type: 'application/pdf' } },
      );
      assert.equal(up.status, 200);
      assert.match(up.text, /<script type="module" src="\/assets\/template-fields\.js\?v=[^"]+"><\/script>/);
      const data = editorData(up.text);
      const hex = /^upload-[a-p]+\/([0-9a-f]{32})$/.exec(formFields(up.text).upload!)![1];
      assert.equal(data.pdf, `/dashboard/templates/uploads/${hex}/document.pdf`);
      assert.equal(data.pages.length, 2);
      assert.equal(data.markers['{{sig_client}}']?.page, 2, 'where each marker is, for the anchored fields');
      const bytesOf = async (path: string) => {
        const cookie = [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
        const r = await fetch(e.h.url(path), { headers: { cookie } });
        assert.equal(r.status, 200, path);
        assert.equal(r.headers.get('content-type'), 'application/pdf');
        return Buffer.from(await r.arrayBuffer());
      };
      assert.ok((await bytesOf(data.pdf)).equals(Buffer.from(PDF2)), 'the upload, byte for byte');
      assert.equal((await member.get(data.pdf)).status, 403, 'members do not edit templates');

      const publish = await admin.get(`/dashboard/templates/${tplId}/publish`);
      const current = (await e.api('GET', `/v1/templates/${tplId}`)).json.current_version as number;
      assert.equal(editorData(publish.text).pdf, `/dashboard/templates/${tplId}/versions/${current}/document.pdf`);
      const v1 = await bytesOf(`/dashboard/templates/${tplId}/versions/1/document.pdf`);
      assert.ok(v1.equals(Buffer.from(PDF2)), 'version 1’s original PDF');
      assert.equal((await admin.get(`/dashboard/templates/${tplId}/versions/99/document.pdf`)).status, 404);

      // Another workspace's admin: neither PDF exists for them, and the upload cannot be published there.
      const other = await e.h.workspace('enterprise');
      const { client: stranger } = await signedIn(e.h, other.id, 'admin');
      assert.equal((await stranger.get(data.pdf)).status, 404);
      assert.equal((await stranger.get(`/dashboard/templates/${tplId}/versions/1/document.pdf`)).status, 404);
      await stranger.get('/dashboard/templates/new');
      const taken = await stranger.postMultipart('/dashboard/templates/new', formFields(up.text));
      assert.equal(taken.status, 400);
      assert.match(taken.text, /no longer here; upload it again/);
      const theirs = await e.h.db.kysely
        .selectFrom('templates')
        .select('id')
        .where('workspace_id', '=', other.id)
        .execute();
      assert.deepEqual(theirs, [], 'nothing published in the other workspace');
    });

    const useFields = (who: string, extra: Record<string, string> = {}) => ({
      'client.name': 'Client Person',
      'client.email': `${who}.client@example.com`,
      'provider.name': 'Provider Person',
      'provider.email': `${who}.provider@example.com`,
      client_name: 'Ada Ltd',
      plan: 'pro',
      seats: '12',
      start_date: '2026-12-01',
      ...extra,
    });

    test('use without review: a document is sent, the signers are mailed, the actor is the person', async () => {
      const form = await member.get(`/dashboard/templates/${tplId}/use`);
      assert.equal(form.status, 200);
      assert.match(form.text, /name="client_name"[^>]* required[^>]* maxlength="80"/);
      assert.match(form.text, /<select id="u-f-\d+" name="plan" required>/);
      const r = await member.post(`/dashboard/templates/${tplId}/use`, useFields('now'));
      assert.equal(r.status, 303, r.text.slice(0, 800));
      const doc = /^\/dashboard\/documents\/(doc_[0-9a-f]+)$/.exec(r.headers.location ?? '')?.[1];
      assert.ok(doc, `to the document: ${r.headers.location}`);
      await e.work();
      assert.ok(await e.linkFor('now.client@example.com'), 'the first signer is invited');
      const trail = await e.h.db.kysely
        .selectFrom('audit_events')
        .select(['action', 'actor'])
        .where('document_id', '=', doc)
        .execute();
      const actors = new Set(trail.filter((t) => t.action !== 'mail.sent').map((t) => t.actor));
      assert.ok(actors.has(`user:${memberEmail}`), `the person is the actor: ${[...actors].join(', ')}`);
      assert.ok(!actors.has('review_page'), 'never the review page');
    });

    test('use with bad input: a readable message, and the form keeps what was typed', async () => {
      await member.get(`/dashboard/templates/${tplId}/use`);
      const r = await member.post(`/dashboard/templates/${tplId}/use`, useFields('bad', { plan: 'gold' }));
      assert.equal(r.status, 400);
      assert.match(r.text, /Nothing was published or sent/);
      assert.match(unescape(r.text), /plan/);
      assert.match(r.text, /value="bad\.client@example\.com"/, 'typed e-mail kept');
      assert.match(r.text, /value="Ada Ltd"/, 'typed field kept');
    });

    test('use with review: staged in "Waiting for review"; confirm sends, discard does not', async () => {
      const stage = async (who: string) => {
        await member.get(`/dashboard/templates/${tplId}/use`);
        const r = await member.post(`/dashboard/templates/${tplId}/use`, useFields(who, { review: 'on' }));
        assert.equal(r.status, 303, r.text.slice(0, 800));
        const id = /^\/dashboard\/reviews\?done=staged#(tin_[0-9a-f]+)$/.exec(r.headers.location ?? '')?.[1];
        assert.ok(id, `to the review list: ${r.headers.location}`);
        return id;
      };
      const a = await stage('keep');
      const b = await stage('drop');
      const list = await member.get('/dashboard/reviews?done=staged');
      assert.equal(list.status, 200);
      assert.match(list.text, /Staged for review/);
      for (const id of [a, b]) assert.match(list.text, new RegExp(`<tr id="${id}">`));
      assert.match(list.text, /<time datetime="[^"]+Z">/, 'the deadline is shown');
      assert.match(list.text, /Review by/);
      await e.work();
      assert.equal((await e.api('GET', `/v1/template-instances/${a}`)).json.status, 'staged');

      const ok = await member.post(`/dashboard/reviews/${a}/confirm`);
      assert.equal(ok.status, 303);
      assert.equal(ok.headers.location, '/dashboard/reviews?done=confirmed');
      const confirmed = (await e.api('GET', `/v1/template-instances/${a}`)).json;
      assert.equal(confirmed.status, 'confirmed');
      await e.work();
      assert.ok(await e.linkFor('keep.client@example.com'), 'confirmed: the first signer is invited');
      const trail = await e.h.db.kysely
        .selectFrom('audit_events')
        .select(['action', 'actor'])
        .where('document_id', '=', confirmed.document_id)
        .where('action', '=', 'template_instance.confirmed')
        .execute();
      assert.deepEqual(trail, [{ action: 'template_instance.confirmed', actor: `user:${memberEmail}` }]);

      await member.get('/dashboard/reviews');
      const gone = await member.post(`/dashboard/reviews/${b}/discard`);
      assert.equal(gone.headers.location, '/dashboard/reviews?done=discarded');
      assert.equal((await e.api('GET', `/v1/template-instances/${b}`)).json.status, 'discarded');
      await e.work();
      await assert.rejects(e.linkFor('drop.client@example.com'), /no signer link/, 'discarded: nobody invited');

      // Confirming again is refused readably (the API's 409), on the list page.
      await member.get('/dashboard/reviews');
      const again = await member.post(`/dashboard/reviews/${a}/confirm`);
      assert.equal(again.status, 409);
      assert.match(again.text, /Nothing was published or sent/);
      assert.doesNotMatch((await member.get('/dashboard/reviews')).text, new RegExp(a), 'no longer waiting');
    });

    test('another workspace’s template and staged instance are 404 on every route; a missing PDF is refused', async () => {
      const other = await e.h.tenant('enterprise');
      const make = async (path: string, body: unknown) => {
        const r = await e.h.request('POST', path, { token: other.token, body });
        assert.equal(r.status, 201, r.text);
        return r.json;
      };
      const foreign = (await make('/v1/templates', await templateBody('Foreign'))).id as string;
      const inst = (
        await make(`/v1/templates/${foreign}/instantiate`, {
          recipients: [
            { slot: 'client', name: 'C', email: 'foreign.c@example.com' },
            { slot: 'provider', name: 'P', email: 'foreign.p@example.com' },
          ],
          field_values: { client_name: 'X', plan: 'pro' },
          review: true,
        })
      ).template_instance.id as string;
      for (const path of ['', '/versions/1', '/use', '/publish', '/archive'])
        assert.equal((await admin.get(`/dashboard/templates/${foreign}${path}`)).status, 404, `GET …${path}`);
      await admin.get('/dashboard/reviews');
      assert.doesNotMatch((await admin.get('/dashboard/reviews')).text, new RegExp(inst), 'not listed');
      assert.equal((await admin.post(`/dashboard/templates/${foreign}/use`, useFields('foreign'))).status, 404);
      assert.equal((await admin.post(`/dashboard/templates/${foreign}/archive`)).status, 404);
      assert.equal((await admin.post(`/dashboard/reviews/${inst}/confirm`)).status, 404);
      assert.equal((await admin.post(`/dashboard/reviews/${inst}/discard`)).status, 404);
      const still = await e.h.request('GET', `/v1/template-instances/${inst}`, { token: other.token });
      assert.equal(still.json.status, 'staged', 'untouched');

      await admin.get('/dashboard/templates/new');
      const none = await admin.postMultipart('/dashboard/templates/new', { name: 'Typed name' });
      assert.equal(none.status, 400);
      assert.match(none.text, /Choose a PDF file\./);
      assert.match(none.text, /value="Typed name"/, 'the typed name is kept');
    });

    test('CSRF: every new POST without a valid token is refused (403) and changes nothing', async () => {
      const stagedR = await e.api('POST', `/v1/templates/${tplId}/instantiate`, {
        recipients: [
          { slot: 'client', name: 'C', email: 'csrf.c@example.com' },
          { slot: 'provider', name: 'P', email: 'csrf.p@example.com' },
        ],
        field_values: { client_name: 'X', plan: 'pro', start_date: '2026-12-01' },
        review: true,
      });
      assert.equal(stagedR.status, 201, stagedR.text);
      const inst = stagedR.json.template_instance.id as string;
      await admin.get('/dashboard/templates');
      for (const path of [
        `/dashboard/templates/${tplId}/archive`,
        `/dashboard/templates/${tplId}/use`,
        `/dashboard/reviews/${inst}/confirm`,
        `/dashboard/reviews/${inst}/discard`,
      ]) {
        assert.equal((await admin.post(path, {}, { csrf: null })).status, 403, `${path} without a token`);
        assert.equal((await admin.post(path, {}, { csrf: 'forged' })).status, 403, `${path} with a forged token`);
      }
      for (const path of ['/dashboard/templates/new', `/dashboard/templates/${tplId}/publish`]) {
        const r = await admin.postMultipart(
          path,
          { name: 'x' },
          { pdf: { name: 'a.pdf', content: PDF2, type: 'application/pdf' } },
          {
            csrf: null,
          },
        );
        assert.equal(r.status, 403, `${path} (multipart) without a token`);
      }
      assert.equal((await e.api('GET', `/v1/template-instances/${inst}`)).json.status, 'staged');
      assert.equal((await e.api('GET', `/v1/templates/${tplId}`)).json.archived_at, null);
    });

    test('roles: a member is refused every admin route (403), an upload is not read', async () => {
      for (const path of ['/dashboard/templates/new', `/dashboard/templates/${tplId}/publish`]) {
        assert.equal((await member.get(path)).status, 403, `GET ${path}`);
        await member.get('/dashboard/templates');
        const r = await member.postMultipart(
          path,
          { name: 'x' },
          { pdf: { name: 'a.pdf', content: PDF2, type: 'application/pdf' } },
        );
        assert.equal(r.status, 403, `POST ${path}`);
        assert.match(r.text, /owners and admins/i);
      }
      assert.equal((await member.get(`/dashboard/templates/${tplId}/archive`)).status, 403);
      await member.get('/dashboard/templates');
      assert.equal((await member.post(`/dashboard/templates/${tplId}/archive`)).status, 403);
      assert.equal((await e.api('GET', `/v1/templates/${tplId}`)).json.current_version, 3, 'nothing published');
    });

    test('archive: confirmation, then hidden from the list unless asked, and no longer usable', async () => {
      const confirm = await admin.get(`/dashboard/templates/${tplId}/archive`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, /Archive Services\?/);
      const r = await admin.post(`/dashboard/templates/${tplId}/archive`);
      assert.equal(r.status, 303);
      assert.equal(r.headers.location, `/dashboard/templates/${tplId}?done=archived`);
      assert.doesNotMatch((await admin.get('/dashboard/templates')).text, new RegExp(tplId));
      const all = await admin.get('/dashboard/templates?archived=1');
      assert.match(all.text, new RegExp(tplId));
      assert.match(all.text, /<td><time datetime="[^"]+Z">[^<]+<\/time><\/td>/, 'last used is shown once used');
      assert.notEqual((await e.api('GET', `/v1/templates/${tplId}`)).json.archived_at, null);
      assert.deepEqual(
        (await operatorAudit('template.archived')).map((a) => a.actor),
        [`user:${adminEmail}`],
      );
      assert.equal((await member.get(`/dashboard/templates/${tplId}/use`)).status, 400);
    });
  });
}
