// Typed fields end to end, on SQLite and PostgreSQL: a template's recipient fields keep their type and rules, and a
// signer's values are checked on the server by a direct POST (no page, no JavaScript): every problem listed with its
// own code, a required field left empty blocks the signature; good values are stamped into the sealed PDF and
// recorded in the sign event of the audit trail. A signing request's `coordinates` checkbox likewise.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { pdfScratch } from '../documents/pdf/testing/tools.js';
import { bothDatabases } from '../testing/services.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { email, templateSteps } from '../templates/testing/e2e.js';
import { plainPdf } from './testing/requests.js';

const databases = await bothDatabases();

const at = (row: number) => ({ page: 1, box: { x: 72, y: 80 + row * 40, width: 220, height: 24 } });
const FIELDS = [
  {
    key: 'company',
    type: 'text',
    slot: 'client',
    required: true,
    label: 'Company',
    pattern: '[A-Z ]+',
    max_length: 20,
    ...at(0),
  },
  { key: 'seats', type: 'number', slot: 'client', required: true, min: 1, max: 50, ...at(1) },
  { key: 'start', type: 'date', slot: 'client', required: true, label: 'Start date', ...at(2) },
  { key: 'agree', type: 'checkbox', slot: 'client', required: true, label: 'I agree', ...at(3) },
  { key: 'plan', type: 'enum', slot: 'client', required: true, options: ['basic', 'pro'], ...at(4) },
  { key: 'contact', type: 'email', slot: 'client', ...at(5) },
  { key: 'sig', type: 'signature', slot: 'client', page: 1, box: { x: 72, y: 400, width: 200, height: 40 } },
];

for (const d of databases) {
  describe(`typed fields end to end (${d.name})`, { skip: d.skip }, () => {
    let e: E2E;
    before(async () => {
      e = await startE2E({ database: d.database, tier: 'enterprise' });
    });
    after(() => e.close());
    const { signedPdf } = templateSteps(() => e);

    async function signerOfTemplate() {
      const pdf = await makePdf({ text: [['Order form']] });
      const tpl = await e.api('POST', '/v1/templates', {
        name: 'Order form',
        file: { name: 'order.pdf', content_base64: b64(pdf) },
        slots: [{ name: 'client' }],
        fields: FIELDS,
      });
      assert.equal(tpl.status, 201, tpl.text);
      const who = email('client');
      const ti = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
        recipients: [{ slot: 'client', name: 'Client Person', email: who }],
      });
      assert.equal(ti.status, 201, ti.text);
      await e.work();
      const token = await e.linkFor(who);
      const info = await e.h.request('GET', `/sign/${token}/info`);
      const ids = Object.fromEntries(
        (info.json.fields as { id: string; type: string; rules?: { label?: string } }[]).map((f, i) => [
          FIELDS[i]!.key,
          f.id,
        ]),
      );
      return { token, ids, info: info.json, documentId: ti.json.template_instance.document_id as string };
    }

    const sign = (token: string, fields: Record<string, unknown>) =>
      e.h.request('POST', `/sign/${token}/sign`, {
        body: { signature: { type: 'typed', text: 'Client Person' }, fields },
      });

    test('each type refuses a bad value by direct POST, all problems listed; empty required fields block', async () => {
      const { token, ids, info } = await signerOfTemplate();
      assert.deepEqual(
        info.fields.map((f: { type: string }) => f.type),
        ['text', 'number', 'date', 'checkbox', 'enum', 'email', 'signature'],
        'recipient fields keep their real type',
      );
      assert.deepEqual(info.fields[0].rules, { required: true, label: 'Company', pattern: '[A-Z ]+', max_length: 20 });

      const bad = await sign(token, {
        [ids.company!]: 'lower case',
        [ids.seats!]: 99,
        [ids.start!]: '2026-02-30',
        [ids.agree!]: 'yes',
        [ids.plan!]: 'gold',
        [ids.contact!]: 'not-an-address',
      });
      assert.equal(bad.status, 422, bad.text);
      assert.equal(bad.json.code, 'template_input_invalid');
      assert.deepEqual(
        bad.json.meta.problems.map((p: { field: string; code: string }) => [p.field, p.code]),
        [
          [ids.company, 'pattern_mismatch'],
          [ids.seats, 'out_of_range'],
          [ids.start, 'invalid_type'],
          [ids.agree, 'invalid_type'],
          [ids.plan, 'invalid_enum'],
          [ids.contact, 'pattern_mismatch'],
        ],
      );
      const more = await sign(token, { [ids.company!]: 'X'.repeat(21), [ids.seats!]: '3', [ids.sig!]: 'forged' });
      assert.equal(more.status, 422, more.text);
      assert.deepEqual(
        more.json.meta.problems.map((p: { field: string; code: string }) => [p.field, p.code]),
        [
          [ids.company, 'too_long'],
          [ids.seats, 'invalid_type'],
          [ids.start, 'field_required'],
          [ids.agree, 'field_required'],
          [ids.plan, 'field_required'],
          [ids.sig, 'readonly_field'],
        ],
      );

      const empty = await e.h.request('POST', `/sign/${token}/sign`, {
        body: { signature: { type: 'typed', text: 'Client Person' } },
      });
      assert.equal(empty.status, 422, empty.text);
      assert.deepEqual(
        empty.json.meta.problems.map((p: { code: string }) => p.code),
        ['field_required', 'field_required', 'field_required', 'field_required', 'field_required'],
      );
      const unticked = await sign(token, {
        [ids.company!]: 'ACME',
        [ids.seats!]: 3,
        [ids.start!]: '2026-03-01',
        [ids.agree!]: false,
        [ids.plan!]: 'pro',
      });
      assert.deepEqual(
        unticked.json.meta.problems.map((p: { field: string; code: string }) => [p.field, p.code]),
        [[ids.agree, 'field_required']],
        'a required checkbox must be ticked',
      );
      const again = await e.h.request('GET', `/sign/${token}/info`);
      assert.equal(again.json.state, 'open', 'a refused signature leaves the request open');
    });

    test('good values are stamped into the sealed PDF and recorded in the audit trail', async () => {
      const { token, ids, documentId } = await signerOfTemplate();
      const ok = await sign(token, {
        [ids.company!]: ' ACME WORKS ',
        [ids.seats!]: 12,
        [ids.start!]: '2026-03-01',
        [ids.agree!]: true,
        [ids.plan!]: 'pro',
        [ids.contact!]: 'buyer@example.com',
      });
      assert.equal(ok.status, 200, ok.text);
      await e.work();
      const trail = await e.api('GET', `/v1/documents/${documentId}/audit-trail`);
      const signed = trail.json.entries.find((x: { action: string }) => x.action === 'signing_request.signed');
      assert.deepEqual(signed.detail.fields, [
        { id: ids.company, label: 'Company', value: 'ACME WORKS' },
        { id: ids.seats, value: 12 },
        { id: ids.start, label: 'Start date', value: '2026-03-01' },
        { id: ids.agree, label: 'I agree', value: true },
        { id: ids.plan, value: 'pro' },
        { id: ids.contact, value: 'buyer@example.com' },
      ]);
      const tmp = await pdfScratch('signet-fields-');
      try {
        const text = tmp.pdfText(await signedPdf(documentId), { page: 1 });
        for (const v of ['ACME WORKS', '12', '2026-03-01', '✓', 'pro', 'buyer@example.com'])
          assert.ok(text.includes(v), `the sealed PDF's text lacks ${v}: ${text}`);
      } finally {
        await tmp.cleanup();
      }
    });

    test('signing request: a coordinates checkbox and a required text field, checked the same way', async () => {
      const who = email('signer');
      const box = { page: 1, width: 150, height: 22, x: 72 };
      const created = await e.api('POST', '/v1/signing-requests', {
        signers: [{ role: 'signer1', email: who, name: 'Signer One' }],
        file: { name: 'contract.pdf', content_base64: await plainPdf() },
        placement: 'coordinates',
        fields: [
          { role: 'signer1', type: 'signature', ...box, y: 300, height: 40 },
          { role: 'signer1', type: 'text', ...box, y: 100 },
          { role: 'signer1', type: 'checkbox', label: 'Terms read', required: true, ...box, y: 140, width: 22 },
          { role: 'signer1', type: 'checkbox', ...box, y: 180, width: 22 },
        ],
      });
      assert.equal(created.status, 201, created.text);
      const refused = await e.api('POST', '/v1/signing-requests', {
        signers: [{ role: 'signer1', email: who, name: 'Signer One' }],
        file: { name: 'contract.pdf', content_base64: await plainPdf() },
        placement: 'coordinates',
        fields: [{ role: 'signer1', type: 'signature', label: 'Sign', ...box, y: 300 }],
      });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.json.meta.field, 'placement.fields[0].label');
      await e.work();
      const token = await e.linkFor(who);
      const bad = await sign(token, { f3: 'yes' });
      assert.equal(bad.status, 422, bad.text);
      assert.deepEqual(
        bad.json.meta.problems.map((p: { field: string; code: string }) => [p.field, p.code]),
        [
          ['f2', 'field_required'],
          ['f3', 'invalid_type'],
        ],
      );
      const ok = await sign(token, { f2: 'Written by hand', f3: true, f4: false });
      assert.equal(ok.status, 200, ok.text);
      await e.work();
      const doc = created.json.document_id as string;
      const tmp = await pdfScratch('signet-fields-sr-');
      try {
        const text = tmp.pdfText(await signedPdf(doc), { page: 1 });
        assert.ok(text.includes('Written by hand'), text);
        assert.equal(text.split('✓').length - 1, 1, `exactly the ticked box carries a check mark: ${text}`);
      } finally {
        await tmp.cleanup();
      }
    });
  });
}
