// A worker killed during a bulk send loses and duplicates no row, on SQLite and on PostgreSQL: worker A breaks off
// inside row 12's transaction (as a killed process would: nothing of that row commits) and keeps its lease; worker
// B, with another id, cannot claim the send until A's lease lapses (the ManualClock moves), then finishes it. A
// worker that lost its lease records nothing. Every row ends with exactly one instance and one invitation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { bothDatabases } from '../testing/services.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { createFileFetcher } from '../documents/fetch-file.js';
import { pdfEngine } from '../documents/pdf/engine.js';
import { createMailQueue } from '../mail/outbox.js';
import { createSmsQueue } from '../sms/outbox.js';
import { noWake } from '../signing/transition.js';
import { createEmitter } from '../webhooks/outbox.repo.js';
import { templateSteps } from './testing/e2e.js';
import { bulkCsv, clientEmail, countRows, mailsTo } from './testing/bulk.js';
import { BULK_LEASE_MS, createBulkSendRunner, type BulkSendJobDeps } from './bulk-sends.job.js';
import { claimBulkSends, LostClaim, recordRows } from './bulk-sends.repo.js';

const databases = await bothDatabases();
const ROWS = 30;
const KILLED_AT = 12;

for (const d of databases) {
  describe(`bulk send with a worker killed mid-run (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database });
    });
    after(() => e.close());
    const { newTemplate } = templateSteps(() => e);
    const worker = (workerId: string, beforeCommit?: (row: number) => void): BulkSendJobDeps => ({
      db: e.h.db,
      clock: e.h.clock,
      emit: createEmitter(e.h.clock),
      mail: createMailQueue(e.h.clock),
      sms: createSmsQueue(e.h.clock),
      wake: noWake,
      blobs: e.h.runtime.blobs,
      pdf: pdfEngine,
      files: createFileFetcher({ allowPrivateNetwork: true }),
      config: e.h.config,
      workerId,
      beforeCommit,
    });

    test('every row exactly once: A dies in row 12, B takes over after the lease lapses', async () => {
      const tpl = await newTemplate();
      const run = Math.random().toString(36).slice(2, 8);
      const r = await e.h.request('POST', `/v1/templates/${tpl.id}/bulk-sends`, {
        token: e.token,
        rawBody: bulkCsv(run, ROWS),
        headers: { 'content-type': 'text/csv' },
      });
      assert.equal(r.status, 202, r.text);
      const id = r.json.bulk_send.id;
      const progress = async () => (await e.api('GET', `/v1/bulk-sends/${id}`)).json.bulk_send;

      const a = createBulkSendRunner(
        worker('worker-a', (row) => {
          if (row === KILLED_AT) throw new Error('killed');
        }),
      );
      await a.runOnce();
      let p = await progress();
      assert.deepEqual([p.status, p.sent, p.failed], ['running', KILLED_AT - 1, 0]);
      assert.equal(await countRows(e.h.db, 'template_instances', tpl.id), KILLED_AT - 1, 'row 12 left nothing');

      const b = createBulkSendRunner(worker('worker-b'));
      assert.equal(await b.runOnce(), 0, 'A still holds the send');
      e.h.clock.advance(BULK_LEASE_MS + 1);

      // A lease that lapsed and was taken: A's late outcome is refused and nothing changes.
      const [taken] = await claimBulkSends(e.h.db, {
        now: e.h.clock.now(),
        workerId: 'worker-b',
        leaseMs: BULK_LEASE_MS,
        limit: 1,
      });
      assert.equal(taken?.id, id);
      await assert.rejects(
        e.h.db.kysely
          .transaction()
          .execute((trx) =>
            recordRows(trx, id, 'worker-a', [KILLED_AT], { status: 'sent', instanceId: 'tin_x' }, e.h.clock.now()),
          ),
        LostClaim,
      );
      e.h.clock.advance(BULK_LEASE_MS + 1);

      assert.ok((await b.runOnce()) > 0, 'B goes on once the lease lapsed');
      p = await progress();
      assert.deepEqual([p.status, p.sent, p.failed, p.rows.length], ['completed', ROWS, 0, ROWS]);
      const ids = p.rows.map((x: any) => x.template_instance_id);
      assert.equal(new Set(ids).size, ROWS, 'one instance per row');
      assert.equal(await countRows(e.h.db, 'template_instances', tpl.id), ROWS, 'and none besides');
      const tries = await sql<{ attempts: number }>`select attempts from bulk_send_rows
        where bulk_send_id = ${id} and row = ${KILLED_AT}`.execute(e.h.db.kysely);
      assert.equal(Number(tries.rows[0]!.attempts), 2, 'row 12 was tried twice and sent once');

      await e.work();
      const mails = await e.smtp.parsed();
      for (let i = 1; i <= ROWS; i++) assert.equal(mailsTo(mails, clientEmail(run, i)), 1, `row ${i}: one invitation`);
      await a.stop();
      await b.stop();
    });
  });
}
