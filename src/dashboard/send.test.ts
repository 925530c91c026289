// Sending from the dashboard over HTTP, on SQLite and PostgreSQL, against the real app on a real port with a real
// SMTP peer: an upload makes a draft (listed, reloaded as saved by the form or by the editor's JSON autosave, deleted);
// sending calls the API's own function: the document has the fields at the coordinates given, the audit trail names
// `user:<email>`, the signers get their invitations and the draft is gone; bad input (no file, not a PDF, too big,
// no signer, a bad e-mail, overlapping or off-page fields) answers a readable message with what was typed kept;
// every new POST refuses a missing CSRF token (403) and a signed-out visitor (sign-in); another workspace's draft is
// not found.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { MAX_FILE_BYTES } from '../limits.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import type { Res } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { dashboardClient, signedIn, type DashboardClient } from './testing/client.js';

const databases = await bothDatabases();
const PDF = await makePdf({ pages: 2, text: [['Master services agreement'], ['Signatures']] });
const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;
const draftOf = (r: Res) => /^\/dashboard\/send\/(drf_[0-9a-f]+)/.exec(r.headers.location ?? '')?.[1];
const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
/** The editor's data on a draft page (fields and pages as saved). */
const editorData = (r: Res) =>
  JSON.parse(/<script type="application\/json" id="editor-data">(.*?)<\/script>/s.exec(r.text)![1]!);

for (const d of databases) {
  describe(`sending from the dashboard (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let member: DashboardClient;
    let memberEmail: string;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'business' });
      ({ client: member, email: memberEmail } = await signedIn(e.h, e.workspaceId, 'member'));
    });
    after(() => e?.close());

    async function upload(fields: Record<string, string> = {}, file: Uint8Array | null = PDF, c = member) {
      await c.get('/dashboard/send');
      return c.postMultipart(
        '/dashboard/send',
        { title: 'Services agreement', message: 'Please sign', locale: 'en', ...fields },
        file ? { file: { name: 'msa.pdf', type: 'application/pdf', content: file } } : undefined,
      );
    }
    async function newDraft(fields: Record<string, string> = {}) {
      const r = await upload(fields);
      assert.equal(r.status, 303, r.text.slice(0, 500));
      const id = draftOf(r);
      assert.ok(id, `redirected to the draft: ${r.headers.location}`);
      return id;
    }
    const twoSigners = (a: string, b: string) => ({
      'signers.0.name': 'Ana Pérez',
      'signers.0.email': a,
      'signers.1.name': 'Li Lei',
      'signers.1.email': b,
    });
    const row = (i: number, f: Record<string, string | number>) =>
      Object.fromEntries(Object.entries(f).map(([k, v]) => [`fields.${i}.${k}`, String(v)]));
    const sig = (i: number, signer: number, y: number) =>
      row(i, { type: 'signature', signer, page: 2, x: 72, y, width: 180, height: 40 });
    const date = (i: number, signer: number, y: number) =>
      row(i, { type: 'date', signer, page: 2, x: 300, y, width: 100, height: 20 });

    test('an upload makes a draft: listed, saved by the form and by JSON, reloaded as saved, deleted', async () => {
      const id = await newDraft({ 'signers.0.name': 'Ana Pérez', 'signers.0.email': 'ana@example.com' });
      const page = await member.get(`/dashboard/send/${id}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /value="Services agreement"/, 'the title is kept');
      assert.match(page.text, /value="Ana Pérez"/, 'the signer is kept');
      assert.deepEqual(editorData(page).pages.length, 2, 'the page sizes are known');
      assert.match((await member.get('/dashboard/send')).text, new RegExp(`href="/dashboard/send/${id}"`), 'listed');

      // The no-script form: a field row and a changed title.
      const saved = await member.post(`/dashboard/send/${id}`, {
        title: 'Renamed',
        'signers.0.name': 'Ana Pérez',
        'signers.0.email': 'ana@example.com',
        ...sig(0, 0, 600),
      });
      assert.equal(saved.status, 303, saved.text.slice(0, 300));
      let again = await member.get(`/dashboard/send/${id}`);
      assert.match(again.text, /value="Renamed"/);
      assert.deepEqual(editorData(again).fields, [
        { signer: 0, type: 'signature', page: 2, x: 72, y: 600, width: 180, height: 40, required: false },
      ]);

      // The editor's autosave: JSON with the CSRF token; a reload shows it.
      const json = await e.h.request('POST', `/dashboard/send/${id}`, {
        body: {
          _csrf: member.csrf(),
          form: { title: 'From the editor', 'signers.0.name': 'Ana Pérez', 'signers.0.email': 'ana@example.com' },
          fields: [{ signer: 0, type: 'initials', page: 1, x: 10.5, y: 20.25, width: 60, height: 30, required: true }],
        },
        headers: { cookie: [...member.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      assert.equal(json.status, 200, json.text.slice(0, 300));
      assert.ok(json.json.saved_at, 'the save time comes back');
      again = await member.get(`/dashboard/send/${id}`);
      assert.match(again.text, /value="From the editor"/);
      assert.deepEqual(editorData(again).fields, [
        { signer: 0, type: 'initials', page: 1, x: 10.5, y: 20.25, width: 60, height: 30, required: true },
      ]);

      const pdf = await member.get(`/dashboard/send/${id}/document.pdf`);
      assert.equal(pdf.status, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');

      assert.equal((await member.post(`/dashboard/send/${id}/delete`)).status, 303);
      assert.equal((await member.get(`/dashboard/send/${id}`)).status, 404, 'deleted');
      assert.doesNotMatch((await member.get('/dashboard/send')).text, new RegExp(id), 'no longer listed');
    });

    test('send: the API’s function makes the document with the fields where placed, as the person', async () => {
      const [a, b] = [email('ana'), email('li')];
      const id = await newDraft(twoSigners(a, b));
      await member.get(`/dashboard/send/${id}`);
      const sent = await member.post(`/dashboard/send/${id}/send`, {
        title: 'Services agreement',
        ...twoSigners(a, b),
        ...sig(0, 0, 600),
        ...date(1, 0, 610),
        ...sig(2, 1, 680),
        ...date(3, 1, 690),
      });
      assert.equal(sent.status, 303, unescape(sent.text).slice(0, 2000));
      const doc = /^\/dashboard\/documents\/(doc_[0-9a-f]+)\?done=sent$/.exec(sent.headers.location ?? '')?.[1];
      assert.ok(doc, `to the document's page: ${sent.headers.location}`);
      assert.match((await member.get(sent.headers.location!)).text, /The document was sent to its signers\./);
      assert.equal((await member.get(`/dashboard/send/${id}`)).status, 404, 'the draft is gone');

      const api = await e.api('GET', `/v1/documents/${doc}`);
      assert.equal(api.status, 200, api.text);
      assert.equal(api.json.title, 'Services agreement');
      const actors = await e.h.db.kysely
        .selectFrom('audit_events')
        .select(['action', 'actor'])
        .where('document_id', '=', doc)
        .execute();
      const sentRows = actors.filter((x) => x.action === 'signing_request.sent');
      assert.equal(sentRows.length, 2, 'one sent event per signer');
      for (const x of sentRows) assert.equal(x.actor, `user:${memberEmail}`, 'the audit trail names the person');

      await e.work();
      const boxes = async (to: string) => {
        const info = await e.h.request('GET', `/sign/${await e.linkFor(to)}/info`);
        assert.equal(info.status, 200, info.text);
        return (info.json.fields as Record<string, unknown>[]).map((f) => ({
          type: f.type,
          page: f.page,
          x: f.x,
          y: f.y,
          width: f.width,
          height: f.height,
        }));
      };
      assert.deepEqual(await boxes(a), [
        { type: 'signature', page: 2, x: 72, y: 600, width: 180, height: 40 },
        { type: 'date', page: 2, x: 300, y: 610, width: 100, height: 20 },
      ]);
      assert.deepEqual(await boxes(b), [
        { type: 'signature', page: 2, x: 72, y: 680, width: 180, height: 40 },
        { type: 'date', page: 2, x: 300, y: 690, width: 100, height: 20 },
      ]);
    });

    test('bad uploads: a readable message, the form kept, no draft', async () => {
      const drafts = async () => (await e.h.db.kysely.selectFrom('dashboard_drafts').select('id').execute()).length;
      const before = await drafts();
      const noFile = await upload({ title: 'Kept title', 'signers.0.email': 'kept@example.com' }, null);
      assert.equal(noFile.status, 400);
      assert.match(noFile.text, /Choose a PDF file to upload\./);
      assert.match(noFile.text, /value="Kept title"/, 'the title is kept');
      assert.match(noFile.text, /value="kept@example.com"/, 'the signer is kept');

      const notPdf = await upload({ title: 'Kept again' }, new TextEncoder().encode('hello, not a pdf'));
      assert.equal(notPdf.status, 400);
      assert.match(notPdf.text, /The file is not a readable, unencrypted PDF\./);
      assert.match(notPdf.text, /value="Kept again"/);

      const big = new Uint8Array(MAX_FILE_BYTES + 1024);
      big.set(new TextEncoder().encode('%PDF-1.7\n'));
      const tooBig = await upload({ title: 'Big one' }, big);
      assert.equal(tooBig.status, 413);
      assert.match(tooBig.text, /The file is larger than 25 MB\./);
      assert.match(tooBig.text, /value="Big one"/);
      assert.equal(await drafts(), before, 'no draft made');
    });

    test('bad sends: no signer, a bad e-mail, overlapping and off-page fields; nothing sent, the form kept', async () => {
      const docs = async () =>
        (await e.h.db.kysely.selectFrom('documents').select('id').where('workspace_id', '=', e.workspaceId).execute())
          .length;
      const before = await docs();
      const id = await newDraft();
      await member.get(`/dashboard/send/${id}`);
      const send = (fields: Record<string, string>) => member.post(`/dashboard/send/${id}/send`, fields);

      const none = await send({ title: 'No signer', ...sig(0, 0, 600) });
      assert.equal(none.status, 400);
      assert.match(none.text, /Add at least one signer with a name and an e-mail address\./);
      assert.match(none.text, /value="No signer"/);

      const badEmail = await send({ 'signers.0.name': 'Ana', 'signers.0.email': 'not-an-address', ...sig(0, 0, 600) });
      assert.equal(badEmail.status, 400);
      assert.match(badEmail.text, /The document was not sent; nothing was created\./);
      assert.match(badEmail.text, /signers\[0\]\.email is not an e-mail address\./, 'the API’s own words');
      assert.match(badEmail.text, /value="not-an-address" aria-invalid="true"/, 'kept and marked');

      const who = { 'signers.0.name': 'Ana', 'signers.0.email': email('ana') };
      const noSignature = await send({
        ...who,
        'signers.1.name': 'Li',
        'signers.1.email': email('li'),
        ...sig(0, 0, 600),
      });
      assert.equal(noSignature.status, 400);
      assert.match(noSignature.text, /No signature field for signer role &quot;signer2&quot;\./, 'the API’s refusal');
      assert.match(noSignature.text, /value="Li" aria-invalid="true"/, 'the signer without one is marked');

      const overlap = await send({
        ...who,
        ...sig(0, 0, 600),
        ...date(1, 0, 600),
        ...row(2, { type: 'text', signer: 0, page: 2, x: 100, y: 610, width: 100, height: 20 }),
      });
      assert.equal(overlap.status, 400);
      assert.match(overlap.text, /Some fields are off their page, overlap or have no signer\./);
      assert.match(overlap.text, /Field 1 overlaps field 3\./);

      const offPage = await send({
        ...who,
        ...row(0, { type: 'signature', signer: 0, page: 2, x: 500, y: 780, width: 180, height: 40 }),
      });
      assert.equal(offPage.status, 400);
      assert.match(offPage.text, /Field 1 is not entirely on its page\./);
      const noPage = await send({
        ...who,
        ...row(0, { type: 'signature', signer: 0, page: 3, x: 10, y: 10, width: 180, height: 40 }),
      });
      assert.match(noPage.text, /Field 1 is not entirely on its page\./, 'a page the PDF lacks');
      assert.deepEqual(editorData(noPage).fields[0].page, 3, 'the field is kept as typed');
      assert.equal(await docs(), before, 'nothing was sent');
    });

    test('every new POST: no CSRF token is 403, a signed-out visitor goes to sign-in; another workspace: 404', async () => {
      const id = await newDraft();
      const posts = [
        '/dashboard/send',
        `/dashboard/send/${id}`,
        `/dashboard/send/${id}/send`,
        `/dashboard/send/${id}/delete`,
      ];
      for (const path of posts) {
        const r = await member.post(path, { title: 'x' }, { csrf: null });
        assert.equal(r.status, 403, `${path} without CSRF`);
        const m = await member.postMultipart(path, { title: 'x' }, undefined, { csrf: 'forged' });
        assert.equal(m.status, 403, `${path} multipart with a forged token`);
        const out = dashboardClient(e.h);
        await out.get('/dashboard/sign-in');
        const anon = await out.post(path, { title: 'x' });
        assert.equal(anon.status, 303, path);
        assert.match(anon.headers.location ?? '', /^\/dashboard\/sign-in/);
      }
      assert.equal((await member.get(`/dashboard/send/${id}`)).status, 200, 'the draft is untouched');

      const t = await e.h.tenant('business');
      const { client: stranger } = await signedIn(e.h, t.workspaceId, 'owner');
      assert.equal((await stranger.get(`/dashboard/send/${id}`)).status, 404);
      assert.equal((await stranger.get(`/dashboard/send/${id}/document.pdf`)).status, 404);
      assert.equal((await stranger.post(`/dashboard/send/${id}/delete`)).status, 404);
      assert.equal((await member.get(`/dashboard/send/${id}`)).status, 200, 'still there');
    });
  });
}
