// Templates end to end through HTTP on the real app, on SQLite and on PostgreSQL: publish, versions, instantiate
// (sent at once or staged), confirm and discard by API, the review window under the injected clock, and the errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postgresForTests } from '../testing/services.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { FIELDS, SLOTS, templateBody, VALUES } from './testing/fixtures.js';

const DAY = 24 * 3600_000;
const pg = postgresForTests();
const databases = [
  { name: 'SQLite', database: 'sqlite' as const, skip: false as const },
  {
    name: 'PostgreSQL',
    database: 'url' in pg ? { postgresAdminUrl: pg.url } : ('sqlite' as const),
    skip: 'skip' in pg ? pg.skip : (false as const),
  },
];

const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;

for (const d of databases) {
  describe(`templates end to end (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
    });
    after(() => e.close());

    test('create, publish v2, instantiate pinned v1 without review: one sent event, invitations in order', async () => {
      const created = await e.api('POST', '/v1/templates', await templateBody());
      assert.equal(created.status, 201, created.text);
      const tpl = created.json;
      assert.match(tpl.id, /^tpl_/);
      assert.equal(tpl.current_version, 1);
      assert.deepEqual(tpl.slots, SLOTS);
      assert.equal(tpl.fields.length, FIELDS.length);
      for (const f of tpl.fields) assert.ok(f.page >= 1 && f.box.width > 0, JSON.stringify(f));

      const v2 = await e.api('POST', `/v1/templates/${tpl.id}/versions`, {
        slots: SLOTS,
        fields: FIELDS.filter((f) => f.key !== 'client_note'),
      });
      assert.equal(v2.status, 201, v2.text);
      assert.equal(v2.json.current_version, 2);
      assert.equal(v2.json.fields.length, FIELDS.length - 1);

      const people = { client: email('client'), provider: email('provider') };
      const inst = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        version: 1,
        recipients: [
          { slot: 'provider', name: 'Provider Person', email: people.provider },
          { slot: 'client', name: 'Client Person', email: people.client },
        ],
        field_values: VALUES,
      });
      assert.equal(inst.status, 201, inst.text);
      const ti = inst.json.template_instance;
      assert.match(ti.id, /^tin_/);
      assert.equal(ti.status, 'confirmed');
      assert.equal(ti.kind, 'instantiate');
      assert.equal(ti.template_version, 1);
      assert.equal(ti.review_url, undefined);
      assert.deepEqual(
        ti.recipients.map((r: any) => [r.slot, r.signing_order]),
        [
          ['client', 1],
          ['provider', 2],
        ],
      );

      await e.work();
      const sent = e.eventsOf('signing_request.sent', ti.document_id);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.source, 'template_instance');
      assert.equal(sent[0]!.signer.email, people.client);
      assert.equal(e.eventsOf('template_instance.confirmed', ti.document_id)[0]?.actor, 'api');
      assert.equal((await e.linksFor(people.provider)).length, 0, 'the second turn waits');

      const doc = await e.api('GET', `/v1/documents/${ti.document_id}`);
      assert.equal(doc.status, 200, doc.text);
      assert.equal(doc.json.status, 'in_progress');
      assert.equal(doc.json.signing_order, 'sequential');

      // v1's recipient fields (client_note exists only in v1) are on the client's page.
      const link = await e.linkFor(people.client);
      const info = await e.h.request('GET', `/sign/${link}/info`);
      assert.equal(info.status, 200, info.text);
      assert.equal(info.json.fields.filter((f: any) => f.type === 'text').length, 1);
    });
  });
}
