// Ten years of a completed document: the daily renewal job (run here once a simulated year) adds a DSS and a new
// document timestamp before the last one's certificate expires, the PKI rolls to a new generation in time, and at
// the end the file still verifies valid at B-LTA with its sealed bytes a prefix of what is served.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { createPkiServices, scheduledJobs } from '../runtime.js';
import { runJob } from '../jobs/scheduler.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { completeDocument, type Completed } from './testing/complete.js';

const YEAR_MS = 365.25 * 24 * 3600_000;

async function signedPdf(e: E2E, id: string): Promise<Uint8Array> {
  const r = await e.h.app.inject({
    method: 'GET',
    url: `/v1/documents/${id}/signed`,
    headers: { authorization: `Bearer ${e.token}` },
  });
  assert.equal(r.statusCode, 200);
  return new Uint8Array(r.rawPayload);
}

describe('renew-timestamps', () => {
  let e: E2E;
  let done: Completed;
  before(async () => {
    e = await startE2E();
    done = await completeDocument(e, { names: ['Þórunn Guðmundsdóttir'] });
  });
  after(() => e.close());

  test('ten years on, after yearly runs, the document still verifies valid at B-LTA', async () => {
    // The job runs daily in a worker; here every half year, 20 times.
    const renewedAt: number[] = [];
    const first = await e.h.db.kysely
      .selectFrom('documents')
      .select('signed_blob')
      .where('id', '=', done.documentId)
      .executeTakeFirstOrThrow();
    for (let half = 0; half <= 20; half++) {
      if (half > 0) e.h.clock.advance(YEAR_MS / 2);
      const r = await e.h.runtime.runJob('renew-timestamps');
      assert.equal(r.failed, 0);
      for (let i = 0; i < (r.renewed as number); i++) renewedAt.push(half / 2);
    }
    // Due a year before the first timestamp's certificate expires (ten years after the seal), and only once.
    assert.equal(renewedAt.length, 1, `renewed at years ${renewedAt.join(', ')}`);
    assert.ok(renewedAt[0]! >= 9 && renewedAt[0]! < 10, `renewed at year ${renewedAt[0]}`);
    const pki = readdirSync(path.join(e.h.config.dataDir, 'pki'));
    assert.ok(pki.includes('gen-2'), `a second PKI generation was made in time: ${pki.join(', ')}`);
    // Its CA publishes at the numbered routes its certificates name.
    const crl2 = await e.h.app.inject({ method: 'GET', url: '/pki/crl/2' });
    assert.equal(crl2.statusCode, 200);
    const crlText = spawnSync('openssl', ['crl', '-inform', 'DER', '-noout', '-issuer'], { input: crl2.rawPayload });
    assert.match(String(crlText.stdout), /CN ?= ?Signet Local CA 2/);
    assert.equal((await e.h.app.inject({ method: 'GET', url: '/pki/ca/2.crt' })).statusCode, 200);
    assert.equal((await e.h.app.inject({ method: 'GET', url: '/pki/crl/9' })).statusCode, 404);
    const tsa2 = spawnSync('openssl', [
      'x509',
      '-noout',
      '-ext',
      'crlDistributionPoints',
      '-in',
      path.join(e.h.config.dataDir, 'pki', 'gen-2', 'tsa.crt'),
    ]);
    assert.match(String(tsa2.stdout), /\/pki\/crl\/2/);

    const now = await signedPdf(e, done.documentId);
    assert.ok(
      Buffer.from(now.subarray(0, done.pdf.length)).equals(Buffer.from(done.pdf)),
      'what was served stays a prefix',
    );
    const doc = await e.api('GET', `/v1/documents/${done.documentId}`);
    assert.equal(doc.json.signed_sha256, createHash('sha256').update(now).digest('hex'));
    assert.equal(doc.json.pades_level, 'B-LTA');
    // The file it replaced is deleted (issue 26: no older copy of a document outlives its purge).
    await e.h.runtime.runJob('purge-documents');
    await assert.rejects(e.h.runtime.blobs.get(first.signed_blob!), 'the previous sealed file is gone');

    const v = await e.h.request('POST', '/v1/verifications', {
      token: e.token,
      rawBody: Buffer.from(now),
      headers: { 'content-type': 'application/pdf' },
    });
    assert.equal(v.status, 200, v.text);
    const report = v.json.verification;
    assert.equal(report.verdict, 'valid', JSON.stringify(report, null, 1));
    assert.equal(report.pades_level, 'B-LTA');
    assert.deepEqual(
      report.signatures.map((s: any) => [s.kind, s.intact, s.trusted]),
      [
        ['signature', true, true],
        ['document_timestamp', true, true],
        ['document_timestamp', true, true],
      ],
    );
    assert.match(report.signatures[2].signer.issuer, /CN=Signet Local CA 2/);
    assert.equal(report.document.id, done.documentId);
    assert.equal(report.document.audit_chain_valid, true);

    // The file as first sealed, never renewed, is out of time now: its only timestamp's certificate has expired.
    const old = (
      await e.h.request('POST', '/v1/verifications', {
        token: e.token,
        rawBody: Buffer.from(done.pdf),
        headers: { 'content-type': 'application/pdf' },
      })
    ).json.verification;
    assert.notEqual(old.verdict, 'valid');
    assert.equal(old.document.id, done.documentId, 'an older copy still names the document');

    const trail = await e.api('GET', `/v1/documents/${done.documentId}/audit-trail`);
    assert.equal(trail.json.chain_valid, true);
    const renewed = trail.json.entries.filter((x: any) => x.action === 'document.timestamp_renewed');
    assert.equal(renewed.length, 1);
    assert.equal(renewed[0].detail.previous_sha256, createHash('sha256').update(done.pdf).digest('hex'));
  });

  test('two workers running the job at once renew each due document once', async () => {
    const second = await completeDocument(e);
    // Nine more years: both documents' last timestamps near their certificates' end.
    e.h.clock.advance(9 * YEAR_MS);
    const catalogue = (workerId: string) =>
      scheduledJobs({
        db: e.h.db,
        clock: e.h.clock,
        config: e.h.config,
        workerId,
        pki: () => createPkiServices(e.h.config, e.h.clock),
      });
    const [a, b] = await Promise.all([
      runJob(catalogue('worker-a'), 'renew-timestamps'),
      runJob(catalogue('worker-b'), 'renew-timestamps'),
    ]);
    assert.equal((a.renewed as number) + (b.renewed as number), 2, JSON.stringify({ a, b }));
    for (const id of [done.documentId, second.documentId]) {
      const trail = await e.api('GET', `/v1/documents/${id}/audit-trail`);
      const count = trail.json.entries.filter((x: any) => x.action === 'document.timestamp_renewed').length;
      assert.equal(count, id === done.documentId ? 2 : 1, id);
    }
  });

  test('a timestamp whose algorithm is listed as weakening is renewed now; one the TSA still uses is not', async () => {
    const doc = await completeDocument(e);
    // As if its last timestamp had been made with SHA-1 (an older TSA): listed as weak, it is due at once.
    await e.h.db.kysely
      .updateTable('documents')
      .set({ ltv_algorithms: ',sha1,ecdsa-with-sha1,' })
      .where('id', '=', doc.documentId)
      .execute();
    const withWeak = (weak: string[]) =>
      runJob(
        scheduledJobs({ db: e.h.db, clock: e.h.clock, config: { ...e.h.config, ltvWeakAlgorithms: weak } }),
        'renew-timestamps',
      );
    // The local TSA signs with SHA-256: listing that as weak would renew into the same algorithm, so nothing runs.
    assert.deepEqual(await withWeak(['sha256']), { renewed: 0, failed: 0, weak_algorithms: [] });
    assert.deepEqual(await withWeak(['sha1']), { renewed: 1, failed: 0, weak_algorithms: ['sha1'] });
    assert.deepEqual(await withWeak(['sha1']), { renewed: 0, failed: 0, weak_algorithms: ['sha1'] }, 'once');
    const row = await e.h.db.kysely
      .selectFrom('documents')
      .select('ltv_algorithms')
      .where('id', '=', doc.documentId)
      .executeTakeFirstOrThrow();
    assert.equal(row.ltv_algorithms, ',sha256,ecdsa-with-sha256,');
  });
});
