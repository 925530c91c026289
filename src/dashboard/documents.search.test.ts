// The dashboard's documents search over HTTP, on SQLite and PostgreSQL (issue 25): a case-insensitive substring of
// the title or a signer's e-mail in any script, `%`, `_` and `"` literal, the same through the text index (3
// characters or more: FTS5 trigram, pg_trgm) and the short path, never matching across two texts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { setRateLimit } from '../keys/keys.repo.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import type { Res } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { signedIn } from './testing/client.js';
import { substringIndex } from '../db/db.js';
import { listWorkspaceDocuments } from '../signing/document-list.repo.js';
import { templateSteps } from '../templates/testing/e2e.js';

type TextIndex = ReturnType<typeof substringIndex>;
const databases = await bothDatabases();
const PDF = b64(await makePdf({ pages: 1, text: [['Mutual NDA']] }));
const listed = (r: Res) => [...r.text.matchAll(/href="\/dashboard\/documents\/(doc_[0-9a-f]+)"/g)].map((m) => m[1]!);

for (const d of databases) {
  describe(`dashboard documents search (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
    });
    after(() => e?.close());

    // A page's ids, with the text index or without (the walk), after a walk of one document.
    const pageIds = (workspaceId: string, search: string, textIndex: TextIndex | null, limit: number) =>
      listWorkspaceDocuments(e.h.db.kysely, { workspaceId, search, limit, textIndex, walkRows: 1 }).then((rows) =>
        rows.map((x) => x.id),
      );

    async function send(o: { title: string; signers?: string[]; token: string }) {
      const signers = (o.signers ?? [`s.${Math.random().toString(36).slice(2, 8)}@example.com`]).map((email, i) => ({
        role: `signer${i + 1}`,
        email,
        name: `Signer ${i + 1}`,
      }));
      const r = await e.h.request('POST', '/v1/signing-requests', {
        token: o.token,
        body: { title: o.title, signers, file: { name: 'nda.pdf', content_base64: PDF }, placement: 'auto_append' },
      });
      assert.equal(r.status, 201, r.text);
      return { id: r.json.document_id as string };
    }

    test('a common term fills its page from the newest documents: the same page as the walk and the text index', async () => {
      const t = await e.h.tenant('enterprise');
      await setRateLimit(e.h.db.kysely, t.keyId, 100_000);
      for (const title of ['Lease alpha', 'Lease beta', 'Other', 'Lease gamma']) await send({ title, token: t.token });
      const list = async (textIndex: ReturnType<typeof substringIndex> | null, limit: number) =>
        (
          await listWorkspaceDocuments(e.h.db.kysely, { workspaceId: t.workspaceId, search: 'lease', limit, textIndex })
        ).map((x) => x.title);
      const indexed = substringIndex(e.h.db);
      // Two of three matches: the page comes from the newest documents; five: the text index gives all three.
      assert.deepEqual(await list(indexed, 2), await list(null, 2));
      assert.equal((await list(indexed, 2)).length, 2);
      assert.deepEqual(await list(indexed, 5), await list(null, 5));
      assert.deepEqual((await list(indexed, 5)).sort(), ['Lease alpha', 'Lease beta', 'Lease gamma']);
    });

    test('the text index reads windows of the history: the same pages as the walk, deep pages and an exact id', async () => {
      // Matches only in the older half of a history spread over 60 days, same-millisecond twins among them; a walk of
      // one or two documents sends each search to the index's windows.
      const t = await e.h.tenant('enterprise');
      await setRateLimit(e.h.db.kysely, t.keyId, 100_000);
      const other = await e.h.tenant('enterprise');
      await setRateLimit(e.h.db.kysely, other.keyId, 100_000);
      // The oldest document matches by a signer's e-mail only.
      await send({ title: 'Invoice 0', signers: ['tenancy.office@example.com'], token: t.token });
      e.h.clock.advance(86_400_000);
      for (let i = 0; i < 24; i++) {
        const old = i < 12;
        await send({ title: old ? `Tenancy ${i}` : `Invoice ${i}`, token: t.token });
        if (old && i % 4 === 0) await send({ title: `Tenancy twin ${i}`, token: t.token });
        if (old) await send({ title: `Tenancy elsewhere ${i}`, token: other.token });
        e.h.clock.advance(2.5 * 86_400_000);
      }
      const idx = substringIndex(e.h.db);
      const list = (
        textIndex: ReturnType<typeof substringIndex> | null,
        limit: number,
        extra: { walkRows?: number; before?: { createdAt: number; id: string }; search?: string } = {},
      ) =>
        listWorkspaceDocuments(e.h.db.kysely, {
          workspaceId: t.workspaceId,
          search: 'tenancy',
          limit,
          textIndex,
          ...extra,
        }).then((rows) => rows.map((x) => x.id));
      for (const walkRows of [1, 2])
        for (const limit of [1, 2, 5, 15, 40]) {
          const want = await list(null, limit);
          assert.equal(want.length, Math.min(limit, 16));
          assert.deepEqual(await list(idx, limit, { walkRows }), want, `walk ${walkRows}, limit ${limit}`);
        }
      // A deeper page: the rows after the 4th match, as the walk gives them.
      const first = await list(null, 4);
      const row = (await e.h.db.kysely
        .selectFrom('documents')
        .select(['created_at', 'id'])
        .where('id', '=', first[3]!)
        .executeTakeFirstOrThrow()) as { created_at: number; id: string };
      const before = { createdAt: row.created_at, id: row.id };
      assert.deepEqual(await list(idx, 5, { walkRows: 1, before }), await list(null, 5, { before }));
      assert.equal((await list(idx, 5, { walkRows: 1, before })).length, 5);
      // The exact id of an old document, found by the index path too.
      const oldest = (await list(null, 40)).at(-1)!;
      assert.deepEqual(await list(idx, 5, { walkRows: 1, search: oldest }), [oldest]);
    });

    test("a window's first row is in it: triplets of one millisecond, the first one's only match its first row", async () => {
      // SQLite's window starts at the first row id of the n-th newest match's millisecond (n = 8 for a page of two).
      // Triplets A, B, C made in that order in one millisecond: A's title is row 0 of it (its e-mail, row 1, does not
      // match), B's title and three e-mails and C's title and two e-mails are the 7 newer matches. A's id is not the
      // lowest of the three, so the page of two holds A; a window that left out its own first row would hold B and
      // C, a full page, and the wrong one.
      const t = await e.h.tenant('enterprise');
      await setRateLimit(e.h.db.kysely, t.keyId, 100_000);
      const emails = (n: number) => Array.from({ length: n }, (_, i) => `pachtvertrag.${i}@example.com`);
      let want: string[] | undefined;
      for (let attempt = 0; attempt < 16 && !want; attempt++) {
        e.h.clock.advance(60_000);
        const a = await send({ title: 'Pachtvertrag Hof', token: t.token });
        const b = await send({ title: 'Pachtvertrag Wiese', signers: emails(3), token: t.token });
        const c = await send({ title: 'Pachtvertrag Wald', signers: emails(2), token: t.token });
        const byList = [a.id, b.id, c.id].sort().reverse();
        if (byList.indexOf(a.id) < 2) want = byList.slice(0, 2);
      }
      assert.ok(want, "a triplet with A's id above another's");
      const list = (textIndex: TextIndex | null, limit: number) =>
        pageIds(t.workspaceId, 'pachtvertrag', textIndex, limit);
      assert.deepEqual(await list(null, 2), want);
      assert.deepEqual(await list(substringIndex(e.h.db), 2), want);
    });

    test("an e-mail written after its document: a staged instance confirmed 13 days later is found, in the list's order", async () => {
      // PostgreSQL's index keys an e-mail by its request's day and a title by its document's: the confirmed request
      // is read 12 days before its document's day (a review lasts 14), and the page must still rank that document
      // below the newer title match.
      const { newTemplate, staged: stage } = templateSteps(() => e);
      const { ti: staged } = await stage((await newTemplate()).id, {
        recipients: [
          { slot: 'client', name: 'Client Person', email: 'erbpacht.client@example.com' },
          { slot: 'provider', name: 'Provider Person', email: 'provider.x@example.com' },
        ],
        title: 'Staged invoice',
      });
      e.h.clock.advance(86_400_000);
      const titled = await send({ title: 'Erbpacht Flurstück 12', token: e.token });
      e.h.clock.advance(12 * 86_400_000);
      assert.equal((await e.api('POST', `/v1/template-instances/${staged.id}/confirm`, {})).status, 200);
      await send({ title: 'Invoice newest', token: e.token });
      const list = (textIndex: TextIndex | null, limit: number) => pageIds(e.workspaceId, 'ERBPACHT', textIndex, limit);
      assert.deepEqual(await list(null, 5), [titled.id, staged.document_id]);
      assert.deepEqual(await list(substringIndex(e.h.db), 5), [titled.id, staged.document_id]);
      assert.deepEqual(await list(substringIndex(e.h.db), 1), [titled.id]);
    });

    test('search: any script, any case, % _ and " literal, short and long (text index) alike', async () => {
      // A workspace of its own, so only these documents can match.
      const t = await e.h.tenant('enterprise');
      await setRateLimit(e.h.db.kysely, t.keyId, 100_000);
      const { client } = await signedIn(e.h, t.workspaceId, 'member');
      // Each search over HTTP (a walk: the workspace is small) and through the text index's windows (a walk of one).
      const find = async (q: string) => {
        const shown = listed(await client.get(`/dashboard/documents?${new URLSearchParams({ q })}`)).sort();
        const indexed = await listWorkspaceDocuments(e.h.db.kysely, {
          workspaceId: t.workspaceId,
          search: q,
          limit: 25,
          textIndex: substringIndex(e.h.db),
          walkRows: 1,
        });
        assert.deepEqual(indexed.map((x) => x.id).sort(), shown, `"${q}" through the text index`);
        return shown;
      };
      const ru = await send({ title: 'Договор Дмитрий', signers: ['Dmitry.Ivanov@example.com'], token: t.token });
      const zh = await send({ title: '王小明 合同', token: t.token });
      const pct = await send({ title: 'Offer 50%_off', token: t.token });
      const quoted = await send({ title: 'Say "hello" twice', token: t.token });

      assert.deepEqual(await find('Дмитрий'), [ru.id]);
      assert.deepEqual(await find('дмитрий'), [ru.id], 'Cyrillic, lower case');
      assert.deepEqual(await find('ДМИТРИЙ'), [ru.id], 'Cyrillic, upper case');
      assert.deepEqual(await find('ДОГОВОР ДМ'), [ru.id], 'across a space');
      assert.deepEqual(await find('IVANOV@EXAMPLE'), [ru.id], 'signer e-mail, any case');
      assert.deepEqual(await find('王小明'), [zh.id], 'Chinese, three characters (text index)');
      assert.deepEqual(await find('小明'), [zh.id], 'Chinese, two characters (the short path)');
      assert.deepEqual(await find('OFFER'), [pct.id], 'Latin, any case');
      assert.deepEqual(await find('50%_off'), [pct.id], '% and _ literal');
      assert.deepEqual(await find('%_o'), [pct.id]);
      assert.deepEqual(await find('50%x'), [], '% is not "any"');
      assert.deepEqual(await find('0_f'), [], '_ is not "one character"');
      assert.deepEqual(await find('%'), [pct.id], 'one character');
      assert.deepEqual(await find('"hello"'), [quoted.id], 'quotes literal');
      assert.deepEqual(await find('"'), [quoted.id]);
      assert.deepEqual(await find('hello" tw'), [quoted.id]);
      assert.deepEqual(await find('Дмитрий 王'), [], 'never across two documents');
      assert.deepEqual(await find(`com${ru.id}`), [], 'never across title and e-mail or id');
      assert.deepEqual(await find(zh.id), [zh.id], 'the exact id');
    });
  });
}
