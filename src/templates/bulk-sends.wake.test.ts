// A created bulk send nudges the in-process runner (Wakers.bulkSends) after its commit, so the job starts at once
// rather than at its next 1 s poll (also one whose every row failed on reading: the job closes it); a dry run wakes
// nothing. The
// real service on the real database; the Wakers are the injected dependency (as noWake is elsewhere).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startE2E, type E2E } from '../testing/e2e.js';
import { createFileFetcher } from '../documents/fetch-file.js';
import { pdfEngine } from '../documents/pdf/engine.js';
import { createMailQueue } from '../mail/outbox.js';
import { createSmsQueue } from '../sms/outbox.js';
import { noWake, type Wakers } from '../signing/transition.js';
import { createEmitter } from '../webhooks/outbox.repo.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import type { AuthContext } from '../http/request-context.js';
import { templateSteps } from './testing/e2e.js';
import { bulkCsv, countRows } from './testing/bulk.js';
import { createBulkSend, dryRunBulkSend } from './bulk-sends.service.js';
import type { TemplatesDeps } from './templates.service.js';

describe('a created bulk send wakes the runner', () => {
  let e: E2E;
  let woken = 0;
  let deps: TemplatesDeps;
  let auth: AuthContext;
  const { newTemplate } = templateSteps(() => e);
  const meta = { ip: null, userAgent: null };

  before(async () => {
    e = await startE2E();
    const wake: Wakers = { ...noWake, bulkSends: () => void woken++ };
    deps = {
      db: e.h.db,
      clock: e.h.clock,
      emit: createEmitter(e.h.clock),
      mail: createMailQueue(e.h.clock),
      sms: createSmsQueue(e.h.clock),
      wake,
      blobs: e.h.runtime.blobs,
      pdf: pdfEngine,
      files: createFileFetcher({ allowPrivateNetwork: true }),
      config: e.h.config,
    };
    const ws = await findWorkspace(e.h.db.kysely, e.workspaceId);
    assert.ok(ws, 'the workspace exists');
    auth = { keyId: null, actor: 'user:wake@example.com', workspace: ws, allowedOrigins: [] };
  });
  after(() => e.close());

  test('once per send, after its rows are written; never for a dry run', async () => {
    const tpl = await newTemplate();
    await dryRunBulkSend(deps, auth, tpl.id, { csv: bulkCsv('wake', 3) });
    assert.equal(woken, 0, 'a dry run wakes nothing');

    const created = await createBulkSend(deps, auth, tpl.id, { csv: bulkCsv('wake', 3) }, meta);
    assert.equal(woken, 1, 'the send woke the runner once');
    assert.equal(await countRows(e.h.db, 'bulk_sends', tpl.id), 1, 'written before the nudge returned');
    assert.equal(created.bulk_send.status, 'queued');

    await createBulkSend(deps, auth, tpl.id, { csv: bulkCsv('wake', 2, { 1: 'cells', 2: 'cells' }) }, meta);
    assert.equal(woken, 2, 'every row failed on reading: the job still closes the send');
  });
});
