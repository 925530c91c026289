// The seeder writes what the real app reads as its own: on both databases, a seeded history behind the real app on a
// real port reads back through the API, its chains verify, its keys authenticate, its due rows are found by the
// jobs, and the summary's counts are the tables'.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startHarness, type Harness } from '../harness.js';
import { bothDatabases } from '../services.js';
import { openDb } from '../../db/db.js';
import { createBlobStore } from '../../documents/blob-store.js';
import { listAudit, verifyChain } from '../../documents/audit.repo.js';
import { DOCUMENT_STATUSES, REQUEST_STATUSES } from '../../signing/states.js';
import { seedHistory, type SeedSummary } from './seed.js';
import { countRows } from './seed.repo.js';
import type { BufferedTable } from './rows.js';
import { prune } from '../../jobs/prune.js';
import { CALLBACK_HOOKS_RETIRE } from '../../webhooks/retention.repo.js';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { sql } from 'kysely';

const DOCUMENTS = 2_000;

for (const d of await bothDatabases()) {
  describe(`seeded history on ${d.name}`, { skip: d.skip }, () => {
    let h: Harness;
    let s: SeedSummary;
    before(async () => {
      h = await startHarness({ database: d.database });
      const blobs = createBlobStore(h.db, h.clock, h.config.dataDir);
      s = await seedHistory(h.db, { documents: DOCUMENTS, blobs, now: h.clock.now() });
    });
    after(() => h?.close());
    const key = () => s.keys[0]!.plaintext;

    test('every table holds what the summary counts; documents and requests in every status', async () => {
      for (const [table, n] of Object.entries(s.rows))
        assert.equal(await countRows(h.db.kysely, table as BufferedTable), n, table);
      assert.equal(s.rows.documents, DOCUMENTS);
      assert.equal(s.workspaces[0]!.documents, DOCUMENTS * 0.8);
      const docStatuses = await h.db.kysely.selectFrom('documents').select('status').distinct().execute();
      assert.deepEqual(new Set(docStatuses.map((r) => r.status)), new Set(DOCUMENT_STATUSES));
      const reqStatuses = await h.db.kysely.selectFrom('signing_requests').select('status').distinct().execute();
      assert.deepEqual(new Set(reqStatuses.map((r) => r.status)), new Set(REQUEST_STATUSES));
    });

    test('a seeded document reads back through the API; its sealed PDF downloads with its recorded hash', async () => {
      const id = s.sample.completed!;
      const r = await h.request('GET', `/v1/documents/${id}`, { token: key() });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.id, id);
      assert.equal(r.json.status, 'completed');
      const pdf = await h.request('GET', `/v1/documents/${id}/signed`, { token: key() });
      assert.equal(pdf.status, 200, pdf.text.slice(0, 200));
      const row = await h.db.kysely
        .selectFrom('documents')
        .select('signed_sha256')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const raw = await h.app.inject({
        method: 'GET',
        url: `/v1/documents/${id}/signed`,
        headers: { authorization: `Bearer ${key()}` },
      });
      assert.equal(createHash('sha256').update(raw.rawPayload).digest('hex'), row.signed_sha256);
      const open = await h.request('GET', `/v1/documents/${s.sample.open}`, { token: key() });
      assert.equal(open.json.status, 'in_progress');
    });

    test('audit chains verify, for every document of a sample of 200', async () => {
      const docs = await h.db.kysely.selectFrom('documents').select('id').orderBy('id').limit(200).execute();
      for (const { id } of docs) {
        const entries = await listAudit(h.db.kysely, id);
        assert.ok(entries.length >= 1, id);
        assert.equal(verifyChain(id, entries), null, id);
      }
      const trail = await h.request('GET', `/v1/documents/${s.sample.completed}/audit-trail`, { token: key() });
      assert.equal(trail.status, 200);
    });

    test('every workspace key authenticates, the legacy one too, each to its own workspace', async () => {
      for (const k of s.keys) {
        const me = await h.request('GET', '/v1/me', { token: k.plaintext });
        assert.equal(me.status, 200, me.text);
        assert.equal(me.json.id, k.workspaceId);
      }
      assert.ok(
        s.keys.some((k) => k.legacy && k.plaintext.startsWith('lgk_live_')),
        'a legacy key',
      );
      const hooks = await h.request('GET', '/v1/hooks', { token: key() });
      assert.equal(hooks.status, 200);
      // The workspace's two hooks, and the callback hooks of its documents (document-scoped, listed too).
      assert.equal(hooks.json.filter((x: { document_id: string | null }) => x.document_id === null).length, 2);
      assert.ok(hooks.json.length > 2, 'callback hooks listed');
    });

    test('a seeded signer link opens its signer page', async () => {
      const t = s.signerTokens[0]!;
      const page = await h.request('GET', `/sign/${t.token}`);
      assert.equal(page.status, 200);
    });

    test('the scheduled jobs find exactly the fixed due sets', async () => {
      const expired = await h.runtime.runJob('expire-requests');
      // The job counts the requests it expired itself, each with its event; their queued followers expire silently.
      const dueRequests = await h.db.kysely
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('name', '=', 'signing_request.expired')
        .where('created_at', '=', h.clock.now())
        .executeTakeFirstOrThrow();
      assert.ok(Number(expired.expired) >= s.due.expiry, JSON.stringify(expired));
      assert.equal(Number(expired.expired), Number(dueRequests.n));
      assert.deepEqual(await h.runtime.runJob('expire-reviews'), { expired: s.due.review });
      const reminded = await h.runtime.runJob('send-reminders');
      assert.ok(Number(reminded.sent) >= s.due.reminder, JSON.stringify(reminded));
      assert.equal((await h.runtime.runJob('prune-key-uses')).deleted, s.due['prune-key-uses']);
    });

    // The SQLite seeder loads with the search triggers off and builds the index once at the end (seed.repo.ts).
    test(
      'the text index holds every title and e-mail, and the search triggers are back for what comes next',
      {
        skip: d.database !== 'sqlite',
      },
      async () => {
        const k = h.db.kysely;
        const count = async (q: string) => Number((await sql<{ n: number }>`${sql.raw(q)}`.execute(k)).rows[0]!.n);
        const expected = (await countRows(k, 'documents')) + (await countRows(k, 'signing_requests'));
        assert.equal(await count('select count(*) as n from document_search_rows'), expected);
        await sql`insert into document_search (document_search, rank) values ('integrity-check', 1)`.execute(k);
        const fresh = await openDb('sqlite::memory:');
        const triggers = (x: typeof k) =>
          sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'trigger' order by name`
            .execute(x)
            .then((r) => r.rows);
        try {
          assert.deepEqual(await triggers(k), await triggers(fresh.kysely));
        } finally {
          await fresh.close();
        }
        const pdf = await makePdf({ text: [['Mietvertrag']] });
        const created = await h.request('POST', '/v1/signing-requests', {
          token: key(),
          body: {
            title: 'Mietvertrag Straße 7',
            placement: 'auto_append',
            file: { name: 'lease.pdf', content_base64: Buffer.from(pdf).toString('base64') },
            signers: [{ role: 'tenant', name: 'Dmitrij Ødegård', email: 'dmitrij.odegard@example.com' }],
          },
        });
        assert.equal(created.status, 201, created.text);
        const found = await sql<{ document_id: string }>`select distinct document_id from document_search
        where text match '"odegard@"' or text match '"Straße 7"'`.execute(k);
        assert.deepEqual(
          found.rows.map((r) => r.document_id),
          [created.json.document_id],
        );
        assert.equal(await count('select count(*) as n from document_search_rows'), expected + 2);
      },
    );

    test('callback hooks are as the prune-events job leaves them: retired a retention after their document ended', async () => {
      const callbacks = () =>
        h.db.kysely.selectFrom('hooks').select(['id', 'deleted_at']).where('document_id', 'is not', null).execute();
      const seeded = await callbacks();
      const retired = seeded.filter((x) => x.deleted_at !== null).length;
      assert.ok(retired > 0 && retired < seeded.length, `some retired, some live: ${retired} of ${seeded.length}`);
      const retire = () =>
        prune(h.db, h.clock, [CALLBACK_HOOKS_RETIRE], { retentionMs: h.config.retention.eventsMs, batchRows: 1000 });
      assert.equal((await retire()).deleted, 0, 'the job finds nothing more to retire');
      await h.db.kysely.updateTable('hooks').set({ deleted_at: null }).where('document_id', 'is not', null).execute();
      assert.equal((await retire()).deleted, retired, 'and retires exactly those the seeder retired');
    });
  });
}

test('the same seed writes the same history', async () => {
  const one = await openDb('sqlite::memory:');
  const two = await openDb('sqlite::memory:');
  try {
    const [a, b] = [
      await seedHistory(one, { documents: 300, seed: 7 }),
      await seedHistory(two, { documents: 300, seed: 7 }),
    ];
    assert.deepEqual(a.keys, b.keys);
    assert.deepEqual(a.signerTokens, b.signerTokens);
    assert.deepEqual(a.rows, b.rows);
    const ids = async (db: typeof one) =>
      (await db.kysely.selectFrom('audit_events').select('hash').orderBy('id').execute()).map((r) => r.hash);
    assert.deepEqual(await ids(one), await ids(two));
  } finally {
    await one.close();
    await two.close();
  }
});
