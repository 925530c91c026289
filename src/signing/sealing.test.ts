// Sealing as a job: a worker that dies holding the claim delays completion only until its lease lapses; a failing
// seal (TSA down) is recorded and retried with backoff; either way document.completed is emitted exactly once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { claimSealJobs, findDocumentById } from './signing.repo.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';

async function allSigned(e: E2E): Promise<string> {
  const email = `crash${Math.random().toString(36).slice(2)}@example.com`;
  const r = await e.api('POST', '/v1/signing-requests', {
    signers: [{ role: 'signer', email, name: 'Crash Test' }],
    file: { name: 'a.pdf', content_base64: b64(await makePdf({ text: [['Agreement']] })) },
    placement: 'auto_append',
  });
  assert.equal(r.status, 201, r.text);
  await e.work();
  const s = await e.h.request('POST', `/sign/${await e.linkFor(email)}/sign`, {
    body: { signature: { type: 'typed', text: 'Crash Test' } },
  });
  assert.equal(s.status, 200);
  return r.json.document_id;
}

describe('sealing survives a dead worker', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E();
  });
  after(() => e.close());

  test('a claim held by a dead worker lapses, another worker seals, and completion is emitted once', async () => {
    const id = await allSigned(e);
    // Another worker claims the job and dies before finishing.
    const claimed = await claimSealJobs(e.h.db, {
      now: e.h.clock.now(),
      workerId: 'dead-worker',
      leaseMs: 5 * 60_000,
      limit: 10,
    });
    assert.deepEqual(claimed, [id]);
    await e.work();
    assert.equal((await findDocumentById(e.h.db.kysely, id))!.status, 'in_progress', 'not taken while the lease holds');
    e.h.clock.advance(5 * 60_000);
    await e.work();
    const doc = (await findDocumentById(e.h.db.kysely, id))!;
    assert.equal(doc.status, 'completed');
    assert.equal(doc.seal_attempts, 2);
    await e.work();
    assert.equal(e.eventsOf('document.completed', id).length, 1);
  });
});

describe('sealing with the TSA down', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ env: { TSA_URL: 'http://127.0.0.1:9/tsa' } });
  });
  after(() => e.close());

  test('a failed seal is recorded and retried with backoff; the document is never left without a retry', async () => {
    const id = await allSigned(e);
    await e.work();
    let doc = (await findDocumentById(e.h.db.kysely, id))!;
    assert.equal(doc.status, 'in_progress');
    assert.equal(doc.seal_state, 'pending');
    assert.match(doc.seal_last_error ?? '', /TSA/);
    assert.ok(doc.seal_claim_expires_at! > e.h.clock.now(), 'a retry is scheduled');
    const firstAttempts = doc.seal_attempts;
    e.h.clock.set(doc.seal_claim_expires_at!);
    await e.work();
    doc = (await findDocumentById(e.h.db.kysely, id))!;
    assert.equal(doc.seal_attempts, firstAttempts + 1, 'retried once the backoff passed');
    assert.equal(e.eventsOf('document.completed', id).length, 0);
    const api = await e.api('GET', `/v1/documents/${id}/signed`);
    assert.equal(api.status, 409);
    assert.equal(api.json.code, 'document_not_completed');
  });
});
