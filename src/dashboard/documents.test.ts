// The dashboard's Documents pages over HTTP, on SQLite and PostgreSQL, against the real app on a real port with a
// real SMTP peer: the list shows this workspace's documents only, filters by status, searches title and signer
// e-mail case-insensitively with `%`, `_` and `!` taken literally, and pages newest first without gaps; a document's
// page shows its signers, audit trail and template; members look but cannot withdraw or remind (403); another
// workspace's document is 404 on every route; withdraw and remind are the API's own (seen through the API, the
// mail and both audit records); the sealed PDF downloads after completion only, the audit certificate always.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { setRateLimit } from '../keys/keys.repo.js';
import { templateBody, VALUES } from '../templates/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import type { Res } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { DOCUMENTS_PAGE_SIZE } from './documents.service.js';
import { signedIn, type DashboardClient } from './testing/client.js';

const databases = await bothDatabases();

const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;
const PDF = b64(await makePdf({ pages: 1, text: [['Mutual NDA']] }));

/** The document ids the list page links to, in page order. */
const listed = (r: Res) => [...r.text.matchAll(/href="\/dashboard\/documents\/(doc_[0-9a-f]+)"/g)].map((m) => m[1]!);
const nextHref = (r: Res) => /href="([^"]+)" rel="next"/.exec(r.text)?.[1]?.replace(/&amp;/g, '&');

for (const d of databases) {
  describe(`dashboard documents (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let owner: DashboardClient;
    let ownerEmail: string;
    let other: { workspaceId: string; token: string };
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
      ({ client: owner, email: ownerEmail } = await signedIn(e.h, e.workspaceId, 'owner'));
      const t = await e.h.tenant('enterprise');
      await setRateLimit(e.h.db.kysely, t.keyId, 100_000);
      other = { workspaceId: t.workspaceId, token: t.token };
    });
    after(() => e?.close());

    async function send(
      o: { title: string; signers?: string[]; order?: 'parallel' | 'sequential'; token?: string } = { title: 'x' },
    ) {
      const signers = (o.signers ?? [email('s1')]).map((address, i) => ({
        role: `signer${i + 1}`,
        email: address,
        name: `Signer ${i + 1}`,
      }));
      const r = await e.h.request('POST', '/v1/signing-requests', {
        token: o.token ?? e.token,
        body: {
          title: o.title,
          signers,
          file: { name: 'nda.pdf', content_base64: PDF },
          placement: 'auto_append',
          signing_order: o.order ?? 'parallel',
        },
      });
      assert.equal(r.status, 201, r.text);
      return {
        id: r.json.document_id as string,
        requests: (r.json.signing_requests as { id: string }[]).map((x) => x.id),
        emails: signers.map((s) => s.email),
      };
    }
    async function sign(address: string) {
      const token = await e.linkFor(address);
      assert.equal((await e.h.request('POST', `/sign/${token}/view`)).status, 200);
      const s = await e.h.request('POST', `/sign/${token}/sign`, {
        body: { signature: { type: 'typed', text: 'Signed Name' } },
      });
      assert.equal(s.status, 200, s.text);
    }
    const search = (q: string, status = '') =>
      owner.get(`/dashboard/documents?${new URLSearchParams({ q, ...(status ? { status } : {}) })}`);
    const auditLogActions = async (action: string) =>
      e.h.db.kysely
        .selectFrom('audit_log')
        .selectAll()
        .where('workspace_id', '=', e.workspaceId)
        .where('action', '=', action)
        .execute();

    test('the list: this workspace only; status filter; search by title or signer e-mail, wildcards literal', async () => {
      const mark = Math.random().toString(36).slice(2, 8);
      const pct = await send({ title: `Alpha ${mark} 100% deal` });
      const und = await send({ title: `Beta_${mark} plan` });
      const bang = await send({ title: `Delta! ${mark}` });
      const gone = await send({ title: `Gamma ${mark}`, signers: [email('Mixed.Case')] });
      assert.equal((await e.api('POST', `/v1/documents/${gone.id}/withdraw`)).status, 200);
      const foreign = await send({ title: `Alpha ${mark} foreign 100% _!`, token: other.token });

      const all = await owner.get('/dashboard/documents');
      assert.equal(all.status, 200);
      assert.match(all.text, /<title>Documents · Signet dashboard<\/title>/);
      assert.match(all.text, /<label for="doc-q">/);
      assert.match(all.text, /<label for="doc-status">/);
      for (const x of [pct, und, bang, gone]) assert.ok(listed(all).includes(x.id), `lists ${x.id}`);
      assert.ok(!listed(all).includes(foreign.id), 'another workspace’s document is not listed');
      assert.ok(!all.text.includes('foreign'), 'nor its title');

      const withdrawn = await owner.get('/dashboard/documents?status=withdrawn');
      assert.deepEqual(
        listed(withdrawn).filter((id) => [pct.id, und.id, bang.id, gone.id].includes(id)),
        [gone.id],
        'status filter',
      );
      assert.match(withdrawn.text, /<option value="withdrawn" selected>/);
      assert.deepEqual(listed(await search(mark, 'in_progress')).sort(), [pct.id, und.id, bang.id].sort());

      assert.deepEqual(listed(await search(`ALPHA ${mark.toUpperCase()}`)), [pct.id], 'title, any case');
      assert.deepEqual(listed(await search(gone.emails[0]!.toUpperCase())), [gone.id], 'signer e-mail, any case');
      assert.deepEqual(listed(await search(gone.emails[0]!.slice(3, 12))), [gone.id], 'part of an e-mail');
      assert.deepEqual(listed(await search(gone.id)), [gone.id], 'the document id');
      // Only this test's titles contain these characters (e-mails here never do); unescaped, each would match all.
      assert.deepEqual(listed(await search('%')), [pct.id], '% is literal');
      assert.deepEqual(listed(await search('_')), [und.id], '_ is literal');
      assert.deepEqual(listed(await search('!')), [bang.id], 'the escape character is literal');
      assert.deepEqual(listed(await search('0%')), [pct.id]);
      assert.deepEqual(listed(await search(`a_${mark}`)), [und.id]);
      assert.deepEqual(listed(await search(`a%${mark}`)), [], '% does not match "any"');
      const none = await search(`nothing-${mark}`);
      assert.equal(none.status, 200);
      assert.deepEqual(listed(none), []);
      assert.match(none.text, /No document matches\./);
      assert.match(none.text, new RegExp(`value="nothing-${mark}"`), 'the search stays in its box');
      assert.equal((await owner.get('/dashboard/documents?status=nonsense&before=junk')).status, 200);
      assert.equal((await owner.get('/dashboard/documents?q=a&q=b&status=x&status=y')).status, 200, 'repeated');
    });

    test('paging: newest first, every document once, filters kept across pages', async () => {
      // A workspace of its own, so the pages hold exactly these documents; many share a creation time.
      const t = await e.h.tenant('enterprise');
      await setRateLimit(e.h.db.kysely, t.keyId, 100_000);
      const { client } = await signedIn(e.h, t.workspaceId, 'member');
      const ids: string[] = [];
      const n = DOCUMENTS_PAGE_SIZE + 6;
      for (let i = 0; i < n; i++) {
        if (i % 7 === 0 || i === n - 1) e.h.clock.advance(1000);
        ids.push((await send({ title: `Paged ${i}`, token: t.token })).id);
      }
      const walk = async (start: string) => {
        const seen: string[] = [];
        let path: string | undefined = start;
        let pages = 0;
        while (path) {
          const r = await client.get(path.startsWith('?') ? `/dashboard/documents${path}` : path);
          assert.equal(r.status, 200);
          seen.push(...listed(r));
          path = nextHref(r);
          assert.ok(++pages <= 3, 'the pages end');
        }
        return { seen, pages };
      };
      const { seen, pages } = await walk('/dashboard/documents');
      assert.equal(pages, 2);
      assert.equal(seen.length, ids.length, 'no document twice');
      assert.deepEqual(new Set(seen), new Set(ids), 'none missing');
      const created = new Map(
        (await e.h.db.kysely.selectFrom('documents').select(['id', 'created_at']).execute()).map((r) => [
          r.id,
          Number(r.created_at),
        ]),
      );
      for (let i = 1; i < seen.length; i++)
        assert.ok(created.get(seen[i - 1]!)! >= created.get(seen[i]!)!, 'newest first');
      assert.equal(seen[0], ids.at(-1), 'the newest (alone in its second) first');

      const filtered = await walk('/dashboard/documents?status=in_progress&q=Paged');
      assert.deepEqual(filtered.seen, seen, 'the filter is kept on the next page');
      const second = await client.get(`/dashboard/documents${nextHref(await client.get('/dashboard/documents'))}`);
      assert.match(second.text, /← Newest/);
    });

    test('a document’s page: signers’ states and the audit trail; sealed PDF only after completion', async () => {
      const doc = await send({ title: 'Two-party NDA', signers: [email('first'), email('second')] });
      await e.work();
      await sign(doc.emails[0]!);

      const r = await owner.get(`/dashboard/documents/${doc.id}`);
      assert.equal(r.status, 200);
      assert.match(r.text, /<title>Two-party NDA · Signet dashboard<\/title>/);
      const rows = [...r.text.matchAll(/<tr>\s*<td>Signer \d<br><small>([^<]+)<\/small>[\s\S]*?<\/tr>/g)];
      assert.equal(rows.length, 2, 'one row per signer');
      assert.match(rows[0]![0], /badge succeeded">signed</);
      assert.match(rows[1]![0], /badge pending">invited</);
      assert.match(rows[1]![0], /aria-label="Remind [^"]+">Remind</, 'an open signer can be reminded');
      assert.doesNotMatch(rows[0]![0], />Remind</, 'a signed one cannot');
      for (const action of [
        'document.created',
        'signing_request.sent',
        'signing_request.viewed',
        'signing_request.signed',
      ])
        assert.match(r.text, new RegExp(`<code>${action.replace('.', '\\.')}</code>`), action);
      assert.ok(r.text.includes(`signer:${doc.emails[0]}`), 'the signer as actor');
      assert.match(r.text, /the chain verifies/);
      assert.match(r.text, /Withdraw document…/);

      const early = await owner.get(`/dashboard/documents/${doc.id}/signed.pdf`);
      assert.equal(early.status, 404, 'no sealed PDF before completion');
      assert.match(early.text, /No sealed PDF yet/);
      const cert = await e.h.request('GET', `/dashboard/documents/${doc.id}/audit-certificate.pdf`, {
        headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      assert.equal(cert.status, 200);
      assert.equal(cert.headers['content-type'], 'application/pdf');
      assert.match(
        cert.headers['content-disposition']!,
        /^attachment; filename="doc_[0-9a-f]+-audit-certificate\.pdf"$/,
      );
      assert.ok(cert.text.startsWith('%PDF-'), 'the certificate is a PDF');

      await sign(doc.emails[1]!);
      await e.work();
      const done = await owner.get(`/dashboard/documents/${doc.id}`);
      assert.match(done.text, /badge succeeded">completed</);
      assert.doesNotMatch(done.text, /Withdraw document…/, 'a completed document cannot be withdrawn');
      const sealed = await fetch(e.h.url(`/dashboard/documents/${doc.id}/signed.pdf`), {
        headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      assert.equal(sealed.status, 200);
      assert.equal(sealed.headers.get('content-type'), 'application/pdf');
      assert.match(sealed.headers.get('content-disposition')!, /^attachment; filename="doc_[0-9a-f]+-signed\.pdf"$/);
      const bytes = Buffer.from(await sealed.arrayBuffer());
      assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
      const api = await fetch(e.h.url(`/v1/documents/${doc.id}/signed`), {
        headers: { authorization: `Bearer ${e.token}` },
      });
      assert.ok(bytes.equals(Buffer.from(await api.arrayBuffer())), 'the same sealed file as the API’s');
    });

    test('withdraw: a confirmation page, then the API’s withdrawal, recorded with the person as actor', async () => {
      const doc = await send({ title: 'To withdraw', signers: [email('w')] });
      const confirm = await owner.get(`/dashboard/documents/${doc.id}/withdraw`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, /Withdraw this document\?/);
      const r = await owner.post(`/dashboard/documents/${doc.id}/withdraw`);
      assert.equal(r.status, 303);
      assert.equal(r.headers.location, `/dashboard/documents/${doc.id}?done=withdrawn`);
      const page = await owner.get(r.headers.location!);
      assert.match(page.text, /Document withdrawn\./);
      assert.match(page.text, /badge revoked">withdrawn</);

      const api = await e.api('GET', `/v1/documents/${doc.id}`);
      assert.equal(api.json.status, 'withdrawn');
      assert.equal(api.json.signing_requests[0].status, 'withdrawn');
      const trail = await e.api('GET', `/v1/documents/${doc.id}/audit-trail`);
      const entry = trail.json.entries.find((x: { action: string }) => x.action === 'document.withdrawn');
      assert.equal(entry?.actor, `user:${ownerEmail}`);
      assert.equal(trail.json.chain_valid, true);
      const rows = (await auditLogActions('document.withdrawn')).filter((x) => x.target_id === doc.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.actor, `user:${ownerEmail}`);

      const again = await owner.post(`/dashboard/documents/${doc.id}/withdraw`);
      assert.equal(again.status, 303);
      assert.equal(again.headers.location, `/dashboard/documents/${doc.id}?refused=withdraw`);
      assert.match((await owner.get(again.headers.location!)).text, /Not withdrawn:/);
      assert.equal((await auditLogActions('document.withdrawn')).filter((x) => x.target_id === doc.id).length, 1);
    });

    test('remind: a second invitation with a fresh link, recorded; a signed signer is not reminded', async () => {
      const doc = await send({ title: 'To remind', signers: [email('slow'), email('quick')] });
      await e.work();
      assert.equal((await e.linksFor(doc.emails[0]!)).length, 1);
      const oldLink = await e.linkFor(doc.emails[0]!);
      await owner.get(`/dashboard/documents/${doc.id}`);
      const r = await owner.post(`/dashboard/documents/${doc.id}/requests/${doc.requests[0]}/remind`);
      assert.equal(r.status, 303);
      assert.equal(r.headers.location, `/dashboard/documents/${doc.id}?done=reminded`);
      assert.match((await owner.get(r.headers.location!)).text, /Reminder sent\./);
      await e.work();
      const links = await e.linksFor(doc.emails[0]!);
      assert.equal(links.length, 2, 'a second e-mail with a link');
      assert.notEqual(links[1], oldLink);
      assert.equal((await e.h.request('GET', `/sign/${oldLink}/info`)).status, 404, 'the old link stops working');
      assert.equal((await e.linksFor(doc.emails[1]!)).length, 1, 'the other signer got nothing');
      const trail = await e.api('GET', `/v1/documents/${doc.id}/audit-trail`);
      const entry = trail.json.entries.find((x: { action: string }) => x.action === 'signing_request.reminded');
      assert.equal(entry?.actor, `user:${ownerEmail}`);
      assert.equal(entry?.signing_request_id, doc.requests[0]);
      const rows = (await auditLogActions('signing_request.reminded')).filter((x) => x.target_id === doc.requests[0]);
      assert.equal(rows.length, 1);

      await sign(doc.emails[1]!);
      const refused = await owner.post(`/dashboard/documents/${doc.id}/requests/${doc.requests[1]}/remind`);
      assert.equal(refused.headers.location, `/dashboard/documents/${doc.id}?refused=remind`);
      await e.work();
      assert.equal((await e.linksFor(doc.emails[1]!)).length, 1, 'no reminder to a signed signer');
    });

    test('members look but cannot withdraw or remind (403)', async () => {
      const doc = await send({ title: 'Members look', signers: [email('m')] });
      const { client: member } = await signedIn(e.h, e.workspaceId, 'member');
      assert.ok(listed(await member.get('/dashboard/documents')).includes(doc.id), 'a member sees the list');
      const page = await member.get(`/dashboard/documents/${doc.id}`);
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /Withdraw document…|>Remind</, 'no actions offered');
      assert.equal((await member.get(`/dashboard/documents/${doc.id}/withdraw`)).status, 403);
      const w = await member.post(`/dashboard/documents/${doc.id}/withdraw`);
      assert.equal(w.status, 403);
      assert.match(w.text, /Only owners and admins/);
      assert.equal(
        (await member.post(`/dashboard/documents/${doc.id}/requests/${doc.requests[0]}/remind`)).status,
        403,
      );
      assert.equal((await e.api('GET', `/v1/documents/${doc.id}`)).json.status, 'in_progress', 'nothing changed');
      const { client: admin } = await signedIn(e.h, e.workspaceId, 'admin');
      await admin.get(`/dashboard/documents/${doc.id}`);
      assert.equal((await admin.post(`/dashboard/documents/${doc.id}/withdraw`)).status, 303, 'admins may');
    });

    test('another workspace’s document is 404 on every route, and so is a mismatched signer', async () => {
      const theirs = await send({ title: 'Theirs', token: other.token });
      const mine = await send({ title: 'Mine' });
      await owner.get('/dashboard/documents');
      for (const path of [
        `/dashboard/documents/${theirs.id}`,
        `/dashboard/documents/${theirs.id}/signed.pdf`,
        `/dashboard/documents/${theirs.id}/audit-certificate.pdf`,
        `/dashboard/documents/${theirs.id}/withdraw`,
        '/dashboard/documents/doc_000000000000000000000000',
      ]) {
        const r = await owner.get(path);
        assert.equal(r.status, 404, path);
        assert.doesNotMatch(r.text, /Theirs/, path);
      }
      for (const path of [
        `/dashboard/documents/${theirs.id}/withdraw`,
        `/dashboard/documents/${theirs.id}/requests/${theirs.requests[0]}/remind`,
        `/dashboard/documents/${mine.id}/requests/${theirs.requests[0]}/remind`,
        `/dashboard/documents/${theirs.id}/requests/${mine.requests[0]}/remind`,
      ])
        assert.equal((await owner.post(path)).status, 404, path);
      const api = await e.h.request('GET', `/v1/documents/${theirs.id}`, { token: other.token });
      assert.equal(api.json.status, 'in_progress', 'their document is untouched');
      await e.work();
      assert.equal((await e.linksFor(mine.emails[0]!)).length, 1, 'no reminder went out');
    });

    test('templates: the template and version show; a staged instance is “staged for review” with its id', async () => {
      const tpl = await e.api('POST', '/v1/templates', await templateBody('Services agreement'));
      assert.equal(tpl.status, 201, tpl.text);
      const recipients = [
        { slot: 'client', name: 'Client Person', email: email('client') },
        { slot: 'provider', name: 'Provider Person', email: email('provider') },
      ];
      const direct = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
        recipients,
        field_values: VALUES,
        title: 'Direct agreement',
      });
      assert.equal(direct.status, 201, direct.text);
      const staged = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
        recipients,
        field_values: VALUES,
        review: true,
        title: 'Reviewed agreement',
      });
      assert.equal(staged.status, 201, staged.text);
      const ti = staged.json.template_instance;

      const drafts = await owner.get('/dashboard/documents?status=draft');
      assert.deepEqual(listed(drafts), [ti.document_id], 'staged documents filter as drafts');
      assert.match(drafts.text, /staged for review/);
      assert.match(drafts.text, /Template Services agreement, version 1/);

      const page = await owner.get(`/dashboard/documents/${ti.document_id}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Staged for review\./);
      assert.ok(page.text.includes(ti.id), 'the instance id');
      assert.match(page.text, /review link was returned once to the API caller/);
      assert.ok(!page.text.includes('/review/'), 'no review link is shown (only its hash is stored)');
      assert.doesNotMatch(page.text, /Withdraw document…/, 'a draft cannot be withdrawn');

      const made = await owner.get(`/dashboard/documents/${direct.json.template_instance.document_id}`);
      assert.match(made.text, /Made from template <strong>Services agreement<\/strong>, version 1/);
      assert.match(made.text, /badge pending">invited</);
    });
  });
}
