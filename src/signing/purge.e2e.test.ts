// DELETE /v1/documents/{id} and the purge-documents job on both databases, through the real app: a purged
// document's blobs are gone, no column of any table holds its signer's e-mail, name or address any more, its
// tombstone stays and still identifies a saved copy of its sealed PDF, a repeat is a no-op, an in-progress document
// is refused; retention purges exactly the documents past their window, once, with two workers racing. (Races with a
// worker's record and a replay: purge-races.e2e.test.ts.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makePng } from '../documents/pdf/testing/fixtures.js';
import { templateBody, VALUES } from '../templates/testing/fixtures.js';
import { countBlobDeletions } from '../documents/blob-deletions.repo.js';
import { openDb, type Db } from '../db/db.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { setWorkspaceRetentionDays } from '../workspaces/settings.service.js';
import { plainPdf, sentDocument, signers } from './testing/requests.js';
import { purgeRows, scanDatabase } from './testing/scan.js';

const databases = await bothDatabases();
const DAY = 86_400_000;
const SIGNER_IP = '127.0.0.77';

for (const d of databases) {
  describe(`purge and retention (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    let worker2: Runtime;
    let db2: Db | undefined;
    before(async () => {
      e = await startE2E({ database: d.database });
      // A second worker process's graph on the same clock: on SQLite its own connection to the file (a writer of
      // its own), on PostgreSQL the pool's other connections.
      if (d.name === 'SQLite') db2 = await openDb(`sqlite:${path.join(e.h.config.dataDir, 'signet.db')}`);
      const db = db2 ?? e.h.db;
      // Secrets as the harness keeps them (plain): a keyring here would encrypt the hook secrets the harness then
      // cannot open.
      worker2 = await createRuntime(e.h.config, {
        api: false,
        worker: true,
        clock: e.h.clock,
        db,
        logger: false,
        keyring: null,
      });
    });
    after(async () => {
      await worker2?.close();
      await db2?.close();
      await e?.close();
    });

    const create = (title: string, people = signers(1)) => sentDocument(e, title, people);
    const purge = (id: string, token = e.token) => e.h.request('DELETE', `/v1/documents/${id}`, { token });

    test('a completed document: blobs and personal data gone, tombstone and verification stay, repeat is a no-op', async () => {
      const tag = Math.random().toString(36).slice(2, 8);
      const person = { role: 'signer1', email: `purge.${tag}@example.com`, name: `Zelda Purgeworth ${tag}` };
      const title = `Purge contract ${tag}`;
      const id = await create(title, [person]);
      const token = await e.linkFor(person.email);
      const opts = { localAddress: SIGNER_IP, headers: { 'user-agent': `purge-browser/${tag}` } };
      assert.equal((await e.h.request('POST', `/sign/${token}/view`, opts)).status, 200);
      const signed = await e.h.request('POST', `/sign/${token}/sign`, {
        ...opts,
        body: { signature: { type: 'drawn', png_base64: b64(makePng(240, 80)) } },
      });
      assert.equal(signed.status, 200, signed.text);
      await e.work();
      const saved = await e.h.app.inject({
        method: 'GET',
        url: `/v1/documents/${id}/signed`,
        headers: { authorization: `Bearer ${e.token}` },
      });
      assert.equal(saved.statusCode, 200);
      const doc = await e.h.db.kysely
        .selectFrom('documents')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const req = await e.h.db.kysely
        .selectFrom('signing_requests')
        .selectAll()
        .where('document_id', '=', id)
        .executeTakeFirstOrThrow();
      const keys = [doc.original_blob, doc.prepared_blob, doc.signed_blob!, req.signature_blob!];
      assert.ok(keys.every(Boolean), `every blob key is set: ${keys.join(', ')}`);
      for (const k of keys) await e.h.runtime.blobs.get(k);
      const needles = [person.email, person.name, SIGNER_IP, title, `purge-browser/${tag}`];
      // The scan can fail: before the purge each needle is somewhere.
      const before = await scanDatabase(e.h.db, needles);
      for (const n of needles) assert.notDeepEqual(before[n], {}, `${n} before the purge`);

      const other = await e.h.tenant('business');
      assert.equal((await purge(id, other.token)).json.code, 'not_found', 'another workspace’s document');
      assert.equal((await purge('doc_missing')).status, 404);

      const first = await purge(id);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.json.id, id);
      assert.equal(first.json.status, 'purged');
      assert.equal(first.json.ended_status, 'completed');
      assert.equal(first.json.signed_sha256, doc.signed_sha256);
      assert.equal(first.json.original_sha256, doc.original_sha256);
      assert.match(first.json.audit_last_hash, /^[0-9a-f]{64}$/);
      for (const k of keys) await assert.rejects(e.h.runtime.blobs.get(k), `blob ${k} is gone`);
      assert.equal(await countBlobDeletions(e.h.db.kysely), 0);
      const afterPurge = await scanDatabase(e.h.db, needles);
      for (const n of needles) assert.deepEqual(afterPurge[n], {}, `${n} after the purge`);
      assert.equal((await e.api('GET', `/v1/documents/${id}`)).status, 404);
      const tomb = await e.h.db.kysely.selectFrom('document_tombstones').selectAll().where('id', '=', id).execute();
      assert.equal(tomb.length, 1);
      assert.equal(await purgeRows(e.h.db, id), 1);

      const again = await purge(id);
      assert.equal(again.status, 200);
      assert.deepEqual(again.json, first.json);
      assert.equal(await purgeRows(e.h.db, id), 1, 'the repeat did nothing');
      assert.equal((await purge(id, other.token)).status, 404);

      const v = await e.h.request('POST', '/v1/verifications', {
        token: e.token,
        rawBody: saved.rawPayload,
        headers: { 'content-type': 'application/pdf' },
      });
      assert.equal(v.status, 200, v.text);
      assert.equal(v.json.verification.document.id, id);
      assert.equal(v.json.verification.document.title, '');
      assert.equal(v.json.verification.document.purged_at, first.json.purged_at);
      assert.equal(v.json.verification.document.completed_at, first.json.completed_at);
    });

    test('an in-progress document is refused with 409 document_not_ended, and kept', async () => {
      const id = await create('Still open');
      const r = await purge(id);
      assert.equal(r.status, 409);
      assert.equal(r.json.code, 'document_not_ended');
      assert.equal(r.json.meta.status, 'in_progress');
      assert.equal((await e.api('GET', `/v1/documents/${id}`)).status, 200);
    });

    test(
      'a blob deletion that fails stays queued and the job deletes it later',
      { skip: d.name !== 'SQLite' },
      async () => {
        const id = await create('Withdrawn, then purged');
        assert.equal((await e.api('POST', `/v1/documents/${id}/withdraw`)).status, 200);
        const doc = await e.h.db.kysely
          .selectFrom('documents')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        // A directory where the file was: deleting it fails (for root too), as a full disk or a crash would stop it.
        const file = path.join(e.h.config.dataDir, 'blobs', doc.prepared_blob);
        fs.rmSync(file);
        fs.mkdirSync(file);
        fs.writeFileSync(path.join(file, 'x'), 'x');
        const r = await purge(id);
        assert.equal(r.status, 200, r.text);
        await assert.rejects(e.h.runtime.blobs.get(doc.original_blob), 'the other blob went');
        const queued = await e.h.db.kysely.selectFrom('blob_deletions').selectAll().execute();
        assert.deepEqual(
          queued.map((q) => [q.key, Number(q.attempts)]),
          [[doc.prepared_blob, 1]],
        );
        assert.ok(queued[0]!.last_error, 'the failure is recorded');
        assert.equal((await e.api('GET', `/v1/documents/${id}`)).status, 404, 'the rows went all the same');
        fs.rmSync(file, { recursive: true });
        fs.writeFileSync(file, 'left behind');
        await e.h.runtime.runJob('purge-documents');
        assert.equal(await countBlobDeletions(e.h.db.kysely), 0);
        assert.equal(fs.existsSync(file), false);
      },
    );

    test('a discarded template document: its instance goes, the template keeps its PDFs and still works', async () => {
      const tpl = await e.api('POST', '/v1/templates', await templateBody('Purged services agreement'));
      assert.equal(tpl.status, 201, tpl.text);
      const recipients = [
        { slot: 'client', name: 'Client Person', email: `client.${Date.now()}@example.com` },
        { slot: 'provider', name: 'Provider Person', email: `provider.${Date.now()}@example.com` },
      ];
      const body = { recipients, field_values: VALUES, review: true };
      const staged = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, body);
      assert.equal(staged.status, 201, staged.text);
      const ti = staged.json.template_instance;
      assert.equal((await e.api('POST', `/v1/template-instances/${ti.id}/discard`)).status, 200);
      const r = await purge(ti.document_id);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.ended_status, 'discarded');
      assert.equal((await e.api('GET', `/v1/template-instances/${ti.id}`)).status, 404);
      const version = await e.h.db.kysely
        .selectFrom('template_versions')
        .selectAll()
        .where('template_id', '=', tpl.json.id)
        .executeTakeFirstOrThrow();
      await e.h.runtime.blobs.get(version.original_blob);
      await e.h.runtime.blobs.get(version.prepared_blob);
      const again = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, body);
      assert.equal(again.status, 201, again.text);
    });

    test('retention: exactly the documents past their window, once, on two workers', async () => {
      const ws = await e.h.tenant('business');
      const api = (m: string, p: string, body?: unknown) => e.h.request(m, p, { token: ws.token, body });
      const make = async (title: string) => {
        const r = await api('POST', '/v1/signing-requests', {
          signers: signers(1),
          file: { name: 'c.pdf', content_base64: await plainPdf(1) },
          placement: 'auto_append',
          title,
        });
        assert.equal(r.status, 201, r.text);
        return r.json.document_id as string;
      };
      const withdraw = async (id: string) =>
        assert.equal((await api('POST', `/v1/documents/${id}/withdraw`)).status, 200);
      const t0 = e.h.clock.now();
      const early = [await make('early 1'), await make('early 2'), await make('early 3')];
      for (const id of early) await withdraw(id);
      const open = await make('still open');
      e.h.clock.advance(2 * DAY);
      const late = await make('late');
      await withdraw(late);
      // Another workspace without retention keeps its ended document.
      const kept = await create('kept forever');
      assert.equal((await e.api('POST', `/v1/documents/${kept}/withdraw`)).status, 200);
      await e.work();
      const set = await setWorkspaceRetentionDays(
        e.h.db,
        { workspaceId: ws.workspaceId, days: 5, actor: 'cli:test' },
        t0,
      );
      assert.deepEqual(set, { ok: true });

      const both = async () => {
        const rs = await Promise.all([e.h.runtime.runJob('purge-documents'), worker2.runJob('purge-documents')]);
        return Number(rs[0].purged) + Number(rs[1].purged);
      };
      const exists = async (id: string) =>
        !!(await e.h.db.kysely.selectFrom('documents').select('id').where('id', '=', id).executeTakeFirst());

      e.h.clock.set(t0 + 5 * DAY - 60_000);
      assert.equal(await both(), 0, 'nothing before the window ends');
      e.h.clock.set(t0 + 5 * DAY + 60_000);
      assert.equal(await both(), 3, 'the three early ones, each once');
      for (const id of early) {
        assert.equal(await exists(id), false);
        assert.equal(await purgeRows(e.h.db, id), 1);
      }
      for (const id of [open, late, kept]) assert.equal(await exists(id), true);
      assert.equal(await both(), 0, 'a second run finds nothing');
      e.h.clock.set(t0 + 7 * DAY + 60_000);
      assert.equal(await both(), 1);
      assert.equal(await exists(late), false);
      assert.equal(await purgeRows(e.h.db, late), 1);
      for (const id of [open, kept]) assert.equal(await exists(id), true);
    });
  });
}
