// Expiry on PostgreSQL with several runners at once: each request expires and emits exactly once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postgresForTests } from '../testing/services.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';

const pg = await postgresForTests();

describe('expiry on PostgreSQL', { skip: 'skip' in pg ? pg.skip : false }, () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ database: { postgresAdminUrl: (pg as { url: string }).url } });
  });
  after(() => e?.close());

  test('four concurrent runners expire 3 documents × 3 signers: 9 events, no duplicates', async () => {
    const expiresAt = new Date(e.h.clock.now() + 3600_000).toISOString();
    const pdf = b64(await makePdf({ text: [['Agreement']] }));
    const docs: string[] = [];
    for (let d = 0; d < 3; d++) {
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: [1, 2, 3].map((i) => ({ role: `r${i}`, email: `d${d}s${i}@example.com`, name: `S${i}` })),
        file: { name: 'a.pdf', content_base64: pdf },
        placement: 'auto_append',
        expires_at: expiresAt,
      });
      assert.equal(r.status, 201, r.text);
      docs.push(r.json.document_id);
    }
    e.h.clock.advance(2 * 3600_000);
    const results = await Promise.all([1, 2, 3, 4].map(() => e.h.runtime.runJob('expire-requests')));
    assert.equal(
      results.reduce((n, r) => n + Number(r.expired), 0),
      9,
    );
    await e.work();
    const events = docs.flatMap((d) => e.eventsOf('signing_request.expired', d));
    assert.equal(events.length, 9);
    assert.equal(new Set(events.map((x) => x.signing_request_id)).size, 9);
    assert.ok(
      events.every((x) => x.expired_at === expiresAt),
      'events.every((x) => x.expired_at === expiresAt)',
    );
    for (const d of docs) assert.equal((await e.api('GET', `/v1/documents/${d}`)).json.status, 'expired');
  });
});
