// The send form as data: what a person typed is read back as typed (spare rows dropped, fields from the table or the
// editor's JSON), the dashboard's own field checks, and the API body the form maps to (signing order by position,
// roles, reminders, expiry, `required` only where the API takes it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fieldProblems,
  formPathOf,
  readFields,
  readForm,
  signersInOrder,
  toCreateBody,
  type DraftField,
} from './send.form.js';

const FILE = { name: 'a.pdf', content_base64: 'JVBERi0=' };
const box = (o: Partial<DraftField>): DraftField => ({
  signer: 0,
  type: 'signature',
  page: 1,
  x: 10,
  y: 10,
  width: 100,
  height: 40,
  required: true,
  ...o,
});

describe('the send form', () => {
  test('rows as typed; trailing blank rows are spare and dropped, a blank row before a filled one stays', () => {
    const f = readForm({
      title: 'T',
      order: 'sequential',
      'signers.0.name': '',
      'signers.0.email': '',
      'signers.1.name': 'Li',
      'signers.1.email': 'li@example.com',
      'signers.1.verification': 'sms_code',
      'signers.2.name': '',
      'signers.2.email': '',
    });
    assert.equal(f.signers.length, 2, 'the trailing spare row is dropped');
    assert.equal(f.signers[1]!.verification, 'sms_code');
    assert.equal(f.order, 'sequential');
    assert.equal(readForm({ order: 'backwards', reminders: 'weekly' }).order, 'parallel', 'unknown order: parallel');
  });

  test('fields from the table (spare and removed rows skipped) or the JSON; a non-number is refused', () => {
    const table = readFields({
      'fields.0.type': 'date',
      'fields.0.signer': '1',
      'fields.0.page': '2',
      'fields.0.x': '10.005',
      'fields.0.y': '20',
      'fields.0.width': '100',
      'fields.0.height': '20',
      'fields.1.type': 'text',
      'fields.1.remove': 'on',
      'fields.2.type': '',
    });
    assert.deepEqual(table, [
      { signer: 1, type: 'date', page: 2, x: 10.01, y: 20, width: 100, height: 20, required: false },
    ]);
    assert.deepEqual(readFields({ fields_json: JSON.stringify([box({ label: ' Note ' })]) }), [box({ label: 'Note' })]);
    assert.deepEqual(readFields({ fields: [box({}), { ...box({}), x: 'left' }] }), { bad: 1 });
  });

  test('problems: off the page, overlapping (both named), no signer; touching edges are fine', () => {
    const form = readForm({ 'signers.0.name': 'A', 'signers.0.email': 'a@example.com' });
    const pages = [{ width: 612, height: 792 }];
    assert.deepEqual(fieldProblems([box({}), box({ x: 110 })], pages, form), [], 'side by side');
    assert.deepEqual(fieldProblems([box({}), box({ x: 109.5 })], pages, form), [
      { field: 0, code: 'overlap', other: 1 },
      { field: 1, code: 'overlap', other: 0 },
    ]);
    assert.deepEqual(fieldProblems([box({ x: 600 })], pages, form), [{ field: 0, code: 'off_page' }]);
    assert.deepEqual(fieldProblems([box({ page: 2 })], pages, form), [{ field: 0, code: 'off_page' }]);
    assert.deepEqual(fieldProblems([box({ signer: 1 })], pages, form), [{ field: 0, code: 'no_signer' }]);
  });

  test('the API body: signers by position, roles by row, fields keep their rows’ roles', () => {
    const form = readForm({
      title: ' Contract ',
      locale: 'de',
      expires: '2027-01-31',
      reminders: 'custom',
      after_days: '3',
      every_days: '2',
      order: 'sequential',
      'signers.0.name': 'Ana',
      'signers.0.email': ' ana@example.com ',
      'signers.0.order': '2',
      'signers.1.name': 'Li',
      'signers.1.email': 'li@example.com',
      'signers.1.role': 'buyer',
      'signers.1.order': '1',
      'signers.1.phone': '+14155550100',
      'signers.1.verification': 'email_code',
    });
    const body = toCreateBody(form, [box({ signer: 0 }), box({ signer: 1, type: 'checkbox', required: false })], FILE);
    assert.deepEqual(body.signers, [
      { role: 'buyer', email: 'li@example.com', name: 'Li', phone: '+14155550100', verification: 'email_code' },
      { role: 'signer1', email: 'ana@example.com', name: 'Ana' },
    ]);
    assert.deepEqual(
      body.fields!.map((f) => [f.role, f.type, f.required]),
      [
        ['signer1', 'signature', undefined],
        ['buyer', 'checkbox', false],
      ],
    );
    assert.equal(body.placement, 'coordinates');
    assert.equal(body.title, 'Contract');
    assert.equal(body.expires_at, '2027-01-31T23:59:59.000Z');
    assert.deepEqual(body.reminders, { after_days: 3, every_days: 2 });
    assert.equal(toCreateBody(readForm({ reminders: 'none' }), [], FILE).reminders, null);
    assert.equal('reminders' in toCreateBody(readForm({}), [], FILE), false, 'the workspace default');
    // An API refusal's place, as the form names it (signers by their row, not their place in the order).
    assert.equal(formPathOf('signers[0].email', signersInOrder(form)), 'signers.1.email');
    assert.equal(formPathOf('placement.fields[3].x', []), 'fields.3');
    assert.equal(formPathOf('expires_at', []), 'expires_at');
  });
});
