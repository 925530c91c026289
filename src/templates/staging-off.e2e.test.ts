// Review staging switched off (SIGNET_REVIEW_STAGING=0): instantiate or generate with `review: true` answers 503
// review_unavailable without Retry-After and creates nothing (no instance, document, blob, audit, event, mail or
// idempotency record); without `review` both work. The dashboard's "use" form then offers no review box. Through
// the real app on a real port, on both databases.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { signedIn } from '../dashboard/testing/client.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { templateBody, VALUES } from './testing/fixtures.js';

const databases = await bothDatabases();
const TABLES = [
  'template_instances',
  'documents',
  'signing_requests',
  'audit_events',
  'audit_log',
  'events',
  'mail_outbox',
  'blobs',
  'idempotency_keys',
] as const;

const filesUnder = (dir: string): number =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .reduce((n, f) => n + (f.isDirectory() ? filesUnder(path.join(dir, f.name)) : 1), 0)
    : 0;

for (const d of databases) {
  describe(`SIGNET_REVIEW_STAGING=0 (${d.name})`, { skip: d.skip }, () => {
    let h: Harness;
    let token: string;
    let workspaceId: string;
    let tplId: string;
    before(async () => {
      h = await startHarness({ database: d.database, env: { SIGNET_REVIEW_STAGING: '0' } });
      ({ token, workspaceId } = await h.tenant('business'));
      const tpl = await h.request('POST', '/v1/templates', { token, body: await templateBody() });
      assert.equal(tpl.status, 201, tpl.text);
      tplId = tpl.json.id;
    });
    after(() => h?.close());

    /** Every row and blob file the calls could have made. */
    const counts = async () => {
      const out: Record<string, number> = { blob_files: filesUnder(path.join(h.config.dataDir, 'blobs')) };
      for (const t of TABLES) {
        const r = await h.db.kysely
          .selectFrom(t)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        out[t] = Number(r.n);
      }
      return out;
    };
    const recipients = [
      { slot: 'client', name: 'Client Person', email: 'client@example.com' },
      { slot: 'provider', name: 'Provider Person', email: 'provider@example.com' },
    ];

    test('review: true → 503 review_unavailable, no Retry-After, nothing created, nothing stored to replay', async () => {
      const before = await counts();
      const calls = [
        ['instantiate', { recipients, field_values: VALUES, review: true }],
        ['generate', { field_values: VALUES, review: true }],
      ] as const;
      for (const [op, body] of calls) {
        for (let attempt = 1; attempt <= 2; attempt++) {
          const r = await h.request('POST', `/v1/templates/${tplId}/${op}`, {
            token,
            body,
            headers: { 'idempotency-key': `staging-off-${op}` },
          });
          assert.equal(r.status, 503, `${op} #${attempt}: ${r.text}`);
          assert.equal(r.json.code, 'review_unavailable');
          assert.match(r.json.error, /switched off/);
          assert.equal(r.headers['retry-after'], undefined, `${op}: it will not come back by waiting`);
          assert.equal(r.headers['idempotent-replayed'], undefined, `${op} #${attempt}: a 503 is never replayed`);
        }
      }
      // Refused before anything is looked up: even an unknown template gets the same answer.
      const unknown = await h.request('POST', '/v1/templates/tpl_nope/instantiate', {
        token,
        body: { recipients, review: true },
      });
      assert.equal(unknown.json.code, 'review_unavailable');
      await h.work();
      assert.deepEqual(await counts(), before);
    });

    test('without review (or review: false) both work: 201', async () => {
      const sent = await h.request('POST', `/v1/templates/${tplId}/instantiate`, {
        token,
        body: { recipients, field_values: VALUES },
      });
      assert.equal(sent.status, 201, sent.text);
      assert.equal(sent.json.template_instance.status, 'confirmed');
      const generated = await h.request('POST', `/v1/templates/${tplId}/generate`, {
        token,
        body: { field_values: VALUES, review: false },
      });
      assert.equal(generated.status, 201, generated.text);
      assert.equal(generated.json.template_instance.status, 'confirmed');
    });

    test('the dashboard’s use form offers no review box, and a forged one is refused', async () => {
      const { client } = await signedIn(h, workspaceId, 'member');
      const form = await client.get(`/dashboard/templates/${tplId}/use`);
      assert.equal(form.status, 200);
      assert.match(form.text, /name="client_name"/);
      assert.doesNotMatch(form.text, /name="review"/);
      const before = await counts();
      const forged = await client.post(`/dashboard/templates/${tplId}/use`, {
        'client.name': 'Client Person',
        'client.email': 'forged.client@example.com',
        'provider.name': 'Provider Person',
        'provider.email': 'forged.provider@example.com',
        client_name: 'Ada Ltd',
        plan: 'pro',
        review: 'on',
      });
      assert.equal(forged.status, 503);
      assert.deepEqual(await counts(), before);
    });
  });
}

describe('review staging on (the default)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  test('review: true stages, and the dashboard offers the review box', async () => {
    const { token, workspaceId } = await h.tenant('business');
    const tpl = await h.request('POST', '/v1/templates', { token, body: await templateBody() });
    const r = await h.request('POST', `/v1/templates/${tpl.json.id}/generate`, {
      token,
      body: { field_values: VALUES, review: true },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.template_instance.status, 'staged');
    const { client } = await signedIn(h, workspaceId, 'member');
    assert.match((await client.get(`/dashboard/templates/${tpl.json.id}/use`)).text, /name="review"/);
  });
});
