// Templates end to end through HTTP on the real app, on SQLite and on PostgreSQL: publish, versions, instantiate
// (sent at once), generate, the SMS channel and the errors. The review lifecycle: review.e2e.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { assertPadesLta } from '../documents/pdf/testing/pades.js';
import { localCaPem } from '../signing/testing/complete.js';
import { bothDatabases } from '../testing/services.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { email, has, templateSteps } from './testing/e2e.js';
import { FIELDS, SLOTS, templateBody, VALUES } from './testing/fixtures.js';

const databases = await bothDatabases();

for (const d of databases) {
  describe(`templates end to end (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
    });
    after(() => e.close());
    const { newTemplate, staged, signedPdf, signAs } = templateSteps(() => e);

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

    test('generate: a completed, sealed file with the values; with review it waits until confirmed', async () => {
      const tpl = await newTemplate();
      const g = await e.api('POST', `/v1/templates/${tpl.id}/generate`, { field_values: VALUES });
      assert.equal(g.status, 201, g.text);
      const gi = g.json.template_instance;
      assert.equal(gi.kind, 'generate');
      assert.equal(gi.status, 'confirmed');
      await e.work();
      const doc = await e.api('GET', `/v1/documents/${gi.document_id}`);
      assert.equal(doc.json.status, 'completed');
      assert.equal(doc.json.signing_requests.length, 0);
      const completed = e.eventsOf('document.completed', gi.document_id);
      assert.equal(completed.length, 1);
      assert.equal(completed[0]!.signing_request_id, null);
      assert.equal(doc.json.template_id, tpl.id, 'the document names its template');
      assert.equal(doc.json.template_version, 1);
      assert.equal(doc.json.pades_level, 'B-LTA');
      const bytes = await signedPdf(gi.document_id);
      if (process.env.CI === 'true' || has('pdfsig')) {
        const tmp = await pdfScratch('signet-gen-');
        try {
          assertPadesLta(tmp, bytes, await localCaPem(e), completed[0]!.tsa_signed_at);
          assert.match(tmp.pdfText(bytes), /Ada Lovelace Ltd/);
        } finally {
          await tmp.cleanup();
        }
      }
      const r = await e.api('POST', `/v1/templates/${tpl.id}/generate`, { field_values: VALUES, review: true });
      const ri = r.json.template_instance;
      assert.equal(ri.status, 'staged');
      await e.work();
      assert.equal((await e.api('GET', `/v1/documents/${ri.document_id}`)).json.status, 'draft');
      assert.equal((await e.api('GET', `/v1/documents/${ri.document_id}/signed`)).status, 409);
      assert.equal((await e.api('POST', `/v1/template-instances/${ri.id}/confirm`, {})).status, 200);
      await e.work();
      assert.equal((await e.api('GET', `/v1/documents/${ri.document_id}`)).json.status, 'completed');
      assert.equal(e.eventsOf('template_instance.confirmed', ri.document_id)[0]?.kind, 'generate');
    });

    test('errors: version_not_found, every field problem at once, missing and invalid recipients, archive', async () => {
      const tpl = await newTemplate();
      const recips = [
        { slot: 'client', name: 'C', email: email('c') },
        { slot: 'provider', name: 'P', email: email('p') },
      ];
      const v9 = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: recips,
        field_values: VALUES,
        version: 9,
      });
      assert.equal(v9.status, 404);
      assert.equal(v9.json.code, 'version_not_found');
      assert.deepEqual(v9.json.meta, { version: 9, current_version: 1 });
      assert.equal((await e.api('GET', `/v1/templates/${tpl.id}/versions/9`)).json.code, 'version_not_found');

      const bad = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: recips,
        field_values: { plan: 'gold', seats: 9999, start_date: 'tomorrow', nope: 1, client_note: 'x' },
      });
      assert.equal(bad.status, 422, bad.text);
      assert.equal(bad.json.code, 'template_input_invalid');
      const codes = Object.fromEntries(bad.json.meta.problems.map((p: any) => [p.field, p.code]));
      assert.deepEqual(codes, {
        client_name: 'field_required',
        plan: 'invalid_enum',
        seats: 'out_of_range',
        start_date: 'invalid_type',
        client_note: 'readonly_field',
        nope: 'unknown_field',
      });

      const missing = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: [recips[0]],
        field_values: VALUES,
      });
      assert.equal(missing.status, 422);
      assert.equal(missing.json.code, 'missing_recipients');
      assert.deepEqual(missing.json.meta.slots, ['provider']);

      const invalidR = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: [
          { slot: 'client', name: 'C', email: 'not-an-email' },
          { slot: 'provider', name: 'P', channel: 'sms', phone: '+1 555 0100' },
          { slot: 'ghost', name: 'G', email: email('g') },
        ],
        field_values: VALUES,
      });
      assert.equal(invalidR.status, 422, invalidR.text);
      assert.equal(invalidR.json.code, 'invalid_recipients');
      assert.deepEqual(
        invalidR.json.meta.problems.map((p: any) => p.code),
        ['invalid_email', 'invalid_phone', 'unknown_slot'],
      );
      const smsNoPhone = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: [recips[0], { slot: 'provider', name: 'P', channel: 'sms' }],
        field_values: VALUES,
      });
      assert.deepEqual(
        smsNoPhone.json.meta.problems.map((p: any) => p.code),
        ['phone_required'],
      );

      const { ti } = await staged(tpl.id);
      const dup = await e.api('POST', `/v1/template-instances/${ti.id}/confirm`, {
        recipients: [
          { ...recips[0], signing_order: 1 },
          { ...recips[1], signing_order: 1 },
        ],
      });
      assert.equal(dup.status, 422);
      assert.equal(dup.json.code, 'invalid_recipients');
      assert.equal(dup.json.meta.problems[0].code, 'duplicate_signing_order');
      assert.equal((await e.api('GET', `/v1/template-instances/${ti.id}`)).json.status, 'staged', 'nothing changed');

      assert.equal((await e.api('DELETE', `/v1/templates/${tpl.id}`)).status, 204);
      assert.equal((await e.api('GET', `/v1/templates/${tpl.id}`)).json.archived_at !== null, true);
      const list = await e.api('GET', '/v1/templates');
      assert.ok(!list.json.data.some((x: any) => x.id === tpl.id), 'archived templates are not listed');
      const withArchived = await e.api('GET', '/v1/templates?archived=true');
      assert.equal(withArchived.status, 200, withArchived.text);
      assert.ok(
        withArchived.json.data.some((x: any) => x.id === tpl.id),
        '?archived=true lists it',
      );
      const one = await e.api('GET', '/v1/templates?archived=true&limit=1');
      assert.equal(one.status, 200, one.text);
      assert.equal(one.json.data.length, 1);
      for (const q of ['?archived=yes', '?limit=0', '?limit=101', '?limit=1.5'])
        assert.equal((await e.api('GET', `/v1/templates${q}`)).status, 400, q);
      const afterArchive = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: recips,
        field_values: VALUES,
      });
      assert.equal(afterArchive.status, 404);
      assert.equal(
        (await e.api('POST', `/v1/template-instances/${ti.id}/confirm`, {})).status,
        200,
        'instances keep working',
      );
    });

    test('publishing a broken template uses the signing-request codes and creates nothing', async () => {
      const body = await templateBody('Broken');
      const missing = await e.api('POST', '/v1/templates', {
        ...body,
        fields: [...FIELDS, { key: 'x', type: 'text', slot: 'sender', anchor: '{{not_in_pdf}}' }],
      });
      assert.equal(missing.status, 400, missing.text);
      assert.equal(missing.json.code, 'no_anchors_found');
      const role = await e.api('POST', '/v1/templates', {
        ...body,
        fields: [
          ...FIELDS,
          { key: 'x', type: 'text', slot: 'witness', page: 1, box: { x: 10, y: 10, width: 50, height: 20 } },
        ],
      });
      assert.equal(role.json.code, 'unknown_role');
      const list = await e.api('GET', '/v1/templates');
      assert.ok(
        !list.json.data.some((x: any) => x.name === 'Broken'),
        "!list.json.data.some((x: any) => x.name === 'Broken')",
      );
    });

    test('SMS channel: an SMS recipient gets the link by text message (outbox and log on the default)', async () => {
      const tpl = await newTemplate();
      const client = email('client');
      const r = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
        recipients: [
          { slot: 'client', name: 'Client Person', email: client },
          { slot: 'provider', name: 'Provider Person', channel: 'sms', phone: '+14155550123', signing_order: 1 },
        ],
        field_values: VALUES,
      });
      assert.equal(r.status, 201, r.text);
      const ti = r.json.template_instance;
      const provider = ti.recipients.find((x: any) => x.slot === 'provider');
      assert.deepEqual([provider.channel, provider.phone, provider.email], ['sms', '+14155550123', null]);
      await e.work();
      const texts = await e.h.db.kysely
        .selectFrom('sms_outbox')
        .selectAll()
        .where('document_id', '=', ti.document_id)
        .execute();
      assert.equal(texts.length, 1);
      assert.equal(texts[0]!.to_phone, '+14155550123');
      assert.equal(texts[0]!.status, 'logged');
      // Both recipients are in the first turn (equal orders sign in parallel): still one sent event, for the first.
      const sent = e.eventsOf('signing_request.sent', ti.document_id);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.signer.email, client);
      assert.equal((await e.linksFor(client)).length, 1, 'both recipients of the first turn are invited');
      const token = /\/sign\/([A-Za-z0-9_-]{43})/.exec(texts[0]!.body)![1]!;
      await signAs(token);
      await signAs(await e.linkFor(client));
      await e.work();
      assert.equal((await e.api('GET', `/v1/documents/${ti.document_id}`)).json.status, 'completed');
    });
  });
}

describe('template channels are Enterprise-only', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ tier: 'business' });
  });
  after(() => e.close());

  test('channel sms on another tier: 402 enterprise-required before anything is created; e-mail works', async () => {
    const tpl = (await e.api('POST', '/v1/templates', await templateBody())).json;
    const before = await e.h.db.kysely.selectFrom('template_instances').select('id').execute();
    const r = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
      recipients: [
        { slot: 'client', name: 'C', email: email('c') },
        { slot: 'provider', name: 'P', channel: 'sms', phone: '+14155550123' },
      ],
      field_values: VALUES,
    });
    assert.equal(r.status, 402, r.text);
    assert.equal(r.json.code, 'enterprise-required');
    assert.equal(r.json.meta.tier, 'business');
    assert.equal((await e.h.db.kysely.selectFrom('template_instances').select('id').execute()).length, before.length);
    const ok = await e.api('POST', `/v1/templates/${tpl.id}/instantiate`, {
      recipients: [
        { slot: 'client', name: 'C', email: email('c') },
        { slot: 'provider', name: 'P', email: email('p') },
      ],
      field_values: VALUES,
    });
    assert.equal(ok.status, 201, ok.text);
  });
});
