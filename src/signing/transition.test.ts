// Racing state changes on one document, over real HTTP on both databases: the moves table and the transition lock
// let exactly one of the racers through, and only the winner's audit entry, event and e-mail exist.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { postgresForTests } from '../testing/services.js';

function suite(start: () => Promise<E2E>) {
  let e: E2E;
  before(async () => {
    e = await start();
  });
  after(() => e?.close());

  async function oneSigner(email: string) {
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: [
        { role: 'signer', email, name: 'Racy Signer' },
        { role: 'witness', email: `w.${email}`, name: 'Witness' },
      ],
      file: { name: 'a.pdf', content_base64: b64(await makePdf({ text: [['Agreement']] })) },
      placement: 'auto_append',
    });
    assert.equal(r.status, 201, r.text);
    await e.work();
    return {
      documentId: r.json.document_id as string,
      requestId: r.json.signing_requests[0].id as string,
      link: await e.linkFor(email),
    };
  }
  const auditOf = async (documentId: string, action: string) =>
    (await e.api('GET', `/v1/documents/${documentId}/audit-trail`)).json.entries.filter(
      (x: { action: string }) => x.action === action,
    );

  test('eight concurrent signatures on one link: one 200, seven 409, one event, one audit entry', async () => {
    const s = await oneSigner(`race.${Date.now()}@example.com`);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        e.h.request('POST', `/sign/${s.link}/sign`, { body: { signature: { type: 'typed', text: 'Racy Signer' } } }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409]);
    assert.ok(
      answers.filter((a) => a.status === 409).every((a) => a.json.code === 'request_not_signable'),
      "answers.filter((a) => a.status === 409).every((a) => a.json.code === 'request_not_signable')",
    );
    await e.work();
    assert.equal(e.eventsOf('signing_request.signed', s.documentId).length, 1);
    assert.equal((await auditOf(s.documentId, 'signing_request.signed')).length, 1);
  });

  test('a decline racing a signature: exactly one wins, and the document follows the winner', async () => {
    const s = await oneSigner(`race2.${Date.now()}@example.com`);
    const [signed, declined] = await Promise.all([
      e.h.request('POST', `/sign/${s.link}/sign`, { body: { signature: { type: 'typed', text: 'Racy Signer' } } }),
      e.h.request('POST', `/sign/${s.link}/decline`, { body: { reason: 'changed my mind' } }),
    ]);
    assert.deepEqual([signed.status, declined.status].sort(), [200, 409]);
    await e.work();
    const doc = (await e.api('GET', `/v1/documents/${s.documentId}`)).json;
    const request = doc.signing_requests.find((r: { id: string }) => r.id === s.requestId);
    if (signed.status === 200) {
      assert.equal(request.status, 'signed');
      assert.equal(doc.status, 'in_progress');
      assert.equal(e.eventsOf('signing_request.declined', s.documentId).length, 0);
    } else {
      assert.equal(request.status, 'declined');
      assert.equal(doc.status, 'declined');
      assert.equal(e.eventsOf('signing_request.signed', s.documentId).length, 0);
    }
  });

  test('concurrent views emit signing_request.viewed once', async () => {
    const s = await oneSigner(`race3.${Date.now()}@example.com`);
    const answers = await Promise.all(Array.from({ length: 6 }, () => e.h.request('POST', `/sign/${s.link}/view`)));
    assert.ok(
      answers.every((a) => a.status === 200),
      'answers.every((a) => a.status === 200)',
    );
    await e.work();
    assert.equal(e.eventsOf('signing_request.viewed', s.documentId).length, 1);
    assert.equal((await auditOf(s.documentId, 'signing_request.viewed')).length, 1);
  });
}

describe('racing transitions (SQLite)', () => suite(() => startE2E()));

const pg = await postgresForTests();
describe('racing transitions (PostgreSQL)', { skip: 'skip' in pg ? pg.skip : false }, () =>
  suite(() => startE2E({ database: { postgresAdminUrl: (pg as { url: string }).url } })),
);
