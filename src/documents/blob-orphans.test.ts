// The orphan check on both databases, through the real app's blob store: a blob whose transaction rolled back is gone
// at once; a blob written with no row naming it (a crash before the commit) is left alone during the grace, then
// found and deleted, and no blob a row names is ever touched.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePng } from './pdf/testing/fixtures.js';
import { countBlobDeletions } from './blob-deletions.repo.js';
import { sweepOrphanBlobs } from './blob-orphans.js';
import { BLOB_ORPHAN_GRACE_MS } from '../limits.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { bothDatabases } from '../testing/services.js';
import { plainPdf, signers } from '../signing/testing/requests.js';

const databases = await bothDatabases();

for (const d of databases) {
  describe(`orphan blobs (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database });
    });
    after(async () => {
      await e?.close();
    });

    test('a rolled-back blob goes at once; a crash leftover goes after the grace; named blobs stay', async () => {
      const blobs = e.h.runtime.blobs;
      const people = signers(1);
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: people,
        file: { name: 'contract.pdf', content_base64: await plainPdf(1) },
        placement: 'auto_append',
        title: 'Orphan check',
      });
      assert.equal(r.status, 201, r.text);
      await e.work();
      const token = await e.linkFor(people[0]!.email);
      assert.equal((await e.h.request('POST', `/sign/${token}/view`)).status, 200);
      const signed = await e.h.request('POST', `/sign/${token}/sign`, {
        body: { signature: { type: 'drawn', png_base64: b64(makePng(240, 80)) } },
      });
      assert.equal(signed.status, 200, signed.text);
      await e.work();
      const doc = await e.h.db.kysely
        .selectFrom('documents')
        .select(['original_blob', 'prepared_blob', 'signed_blob'])
        .where('id', '=', r.json.document_id)
        .executeTakeFirstOrThrow();
      const named = [doc.original_blob, doc.prepared_blob, doc.signed_blob!];
      assert.ok(named.every(Boolean), 'the completed document names its blobs');

      // A transaction that writes a blob and then fails takes the blob with it.
      let rolledBack = '';
      await assert.rejects(
        e.h.db.kysely.transaction().execute(async (trx) => {
          rolledBack = await blobs.put(new Uint8Array([1, 2, 3]), 'original', trx);
          throw new Error('the row could not be written');
        }),
        /could not be written/,
      );
      await assert.rejects(blobs.get(rolledBack), 'the rolled-back blob is gone');

      // A crash between the blob's write and its commit: a blob nothing names.
      const leftover = await blobs.put(new Uint8Array([4, 5, 6]), 'original');
      const young = await sweepOrphanBlobs(e.h.db, e.h.clock, blobs, { remove: true });
      assert.deepEqual(young.orphans, [], 'within the grace nothing is an orphan');
      assert.deepEqual(await blobs.get(leftover), new Uint8Array([4, 5, 6]));

      // Files carry the wall clock's time: move past the grace from whichever is later.
      e.h.clock.set(Math.max(Date.now(), e.h.clock.now()) + BLOB_ORPHAN_GRACE_MS + 3600_000);
      const found = await sweepOrphanBlobs(e.h.db, e.h.clock, blobs, { remove: false });
      assert.deepEqual(found.orphans, [leftover], 'the check finds exactly the leftover');
      assert.ok(found.checked >= named.length + 1, `checked ${found.checked}`);
      const swept = await sweepOrphanBlobs(e.h.db, e.h.clock, blobs, { remove: true });
      assert.deepEqual(swept.orphans, [leftover]);
      assert.equal(swept.deleted, 1);
      await assert.rejects(blobs.get(leftover), 'the leftover is deleted');
      for (const k of named) assert.ok((await blobs.get(k)).length > 0, `${k} is still there`);
      assert.equal(await countBlobDeletions(e.h.db.kysely), 0, 'nothing left queued');
      const again = await sweepOrphanBlobs(e.h.db, e.h.clock, blobs, { remove: false });
      assert.deepEqual(again.orphans, [], 'a second check finds nothing');
      const pdf = await e.h.request('GET', `/v1/documents/${r.json.document_id}/signed`, { token: e.token });
      assert.equal(pdf.status, 200, 'the sealed PDF is still served');
    });
  });
}
