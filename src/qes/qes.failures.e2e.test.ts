// Every failure a qualified signer can meet, injected through the local provider's `fail` switch, on SQLite and
// PostgreSQL: the page the signer lands on (in the document's language), the request still signable, the audit
// entry saying why, and the document's file unchanged. Then the per-document serialization of qualified signers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listAudit } from '../documents/audit.repo.js';
import { bothDatabases } from '../testing/services.js';
import type { CscFailure } from './testing/csc-provider.js';
import { driveCeremony, type Drive } from './testing/drive.js';
import { createQesRequest, startQesE2E, type QesE2E } from './testing/qes-e2e.js';

const databases = await bothDatabases();

type Case = {
  fail: NonNullable<CscFailure>;
  /** Where the switch is thrown: before the ceremony, or while the signer is at the provider (before a callback). */
  at: 'start' | 'identify_callback' | 'authorize_callback';
  outcome: string;
  status: number;
  audit: string;
};

const CASES: Case[] = [
  { fail: 'cancel', at: 'start', outcome: 'cancelled', status: 400, audit: 'qes.cancelled' },
  { fail: 'token_refused', at: 'start', outcome: 'refused', status: 400, audit: 'qes.refused' },
  { fail: 'down', at: 'identify_callback', outcome: 'provider_down', status: 503, audit: 'qes.provider_unavailable' },
  { fail: 'down', at: 'authorize_callback', outcome: 'provider_down', status: 503, audit: 'qes.provider_unavailable' },
  { fail: 'expired_cert', at: 'start', outcome: 'cert_expired', status: 400, audit: 'qes.refused' },
  { fail: 'revoked_cert', at: 'start', outcome: 'cert_revoked', status: 400, audit: 'qes.refused' },
  { fail: 'not_qualified', at: 'start', outcome: 'cert_not_qualified', status: 400, audit: 'qes.refused' },
  { fail: 'bad_signature', at: 'authorize_callback', outcome: 'bad_signature', status: 400, audit: 'qes.refused' },
];

for (const d of databases) {
  describe(`qualified signature failures (${d.name})`, { skip: d.skip }, () => {
    let q: QesE2E;
    before(async () => {
      q = await startQesE2E(d.database);
    });
    after(async () => q?.close());

    /** Drives anna's ceremony with `c.fail` thrown at its moment; returns Signet's answer to the failing step. */
    async function failWith(c: Case, token: string): Promise<Drive> {
      const { provider } = q;
      q.syncClock();
      provider.fail = c.at === 'start' ? c.fail : null;
      try {
        if (c.at === 'start') return await driveCeremony({ origin: q.origin, token, provider, user: 'anna' });
        const round = c.at === 'identify_callback' ? 0 : 1;
        const held = await driveCeremony({ origin: q.origin, token, provider, user: 'anna', stopAtCallback: round });
        assert.ok(held.pendingCallback, `the provider redirected back (${JSON.stringify(held.last).slice(0, 300)})`);
        provider.fail = c.fail;
        const res = await fetch(held.pendingCallback!, { redirect: 'manual', headers: { cookie: held.cookie! } });
        const step = { url: held.pendingCallback!, status: res.status, location: null, body: await res.text() };
        return { steps: [...held.steps, step], last: step, cookie: held.cookie };
      } finally {
        provider.fail = null;
      }
    }

    for (const c of CASES) {
      test(`${c.fail} (${c.at}): the ${c.outcome} page, still signable, audited, no file change`, async () => {
        const { e } = q;
        const id = await createQesRequest(e, { locale: 'de' });
        const token = await e.linkFor('anna@example.com');
        const drive = await failWith(c, token);
        assert.equal(drive.last.status, c.status, drive.last.body.slice(0, 500));
        assert.match(drive.last.body, new RegExp(`data-state="${c.outcome}"`), 'the outcome page');
        assert.match(drive.last.body, /<html lang="de"/, 'in the document’s language');
        assert.match(drive.last.body, new RegExp(`href="/sign/${token}"`), 'a way back to the document');

        const doc = await e.api('GET', `/v1/documents/${id}`);
        assert.equal(doc.json.status, 'in_progress');
        assert.equal(doc.json.signing_requests[0].status, 'pending', 'anna can still sign');
        assert.equal(doc.json.signing_requests[0].qualified_signature, null);
        const row = await e.h.db.kysely
          .selectFrom('documents')
          .select(['qes_blob', 'qes_lock_request_id'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        assert.equal(row.qes_blob, null, 'the file is as it was');
        assert.equal(row.qes_lock_request_id, null, 'no signer holds the document');
        const entries = await listAudit(e.h.db.kysely, id);
        const entry = entries.find((x) => x.action === c.audit);
        assert.ok(entry, `audit ${c.audit} in ${entries.map((x) => x.action).join(', ')}`);
        assert.match(JSON.stringify(entry.detail), /Test QTSP/, 'names the provider');
        if (c.fail.endsWith('_cert') || c.fail === 'not_qualified' || c.fail === 'bad_signature')
          assert.match(JSON.stringify(entry.detail), /"serial":"[0-9a-f]+"/, 'names the certificate');
        assert.ok(!entries.some((x) => x.action === 'signing_request.signed'), 'nothing signed');
      });
    }

    test('after a failure the signer signs; qualified signers are serialized per document', async () => {
      const { e, provider } = q;
      const id = await createQesRequest(e);
      const anna = await e.linkFor('anna@example.com');
      const li = await e.linkFor('li@example.com');
      await failWith(CASES[0]!, anna);
      q.syncClock();
      // Anna is past identification (she holds the document); li meets the busy page, then signs after her.
      const held = await driveCeremony({ origin: q.origin, token: anna, provider, user: 'anna', stopAtCallback: 1 });
      const busy = await driveCeremony({ origin: q.origin, token: li, provider, user: 'li' });
      assert.equal(busy.last.status, 409, busy.last.body.slice(0, 300));
      assert.match(busy.last.body, /data-state="busy"/);
      const landed = await fetch(held.pendingCallback!, { redirect: 'manual', headers: { cookie: held.cookie! } });
      assert.equal(landed.status, 303, await landed.text());
      const again = await driveCeremony({ origin: q.origin, token: li, provider, user: 'li' });
      assert.equal(again.last.status, 303, again.last.body.slice(0, 300));
      await e.work();
      const doc = await e.api('GET', `/v1/documents/${id}`);
      assert.equal(doc.json.status, 'completed');
    });
  });
}
