import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkSignerValues,
  checkValue,
  isCalendarDate,
  signerInputOf,
  stampText,
  templateInputError,
} from './fields.js';
import type { Field } from './pdf/types.js';

const box = { page: 1, x: 10, y: 10, width: 100, height: 20 };
const field = (id: string, type: Field['type'], rules?: Field['rules']): Field => ({
  id,
  role: 'signer1',
  type,
  ...box,
  ...(rules ? { rules } : {}),
});

const FIELDS: Field[] = [
  field('f1', 'signature'),
  field('f2', 'text', { required: true, label: 'Company', max_length: 5, pattern: '[A-Z]+' }),
  field('f3', 'number', { required: true, min: 1, max: 10 }),
  field('f4', 'date', { required: true }),
  field('f5', 'checkbox', { required: true, label: 'I agree' }),
  field('f6', 'enum', { required: true, options: ['basic', 'pro'] }),
  field('f7', 'email', { required: false }),
  field('f8', 'date'),
];

test('every type refuses a bad value with its own code, all problems at once', () => {
  const { problems, values } = checkSignerValues(FIELDS, {
    f2: 'abcdefg',
    f3: 'twelve',
    f4: '2026-02-30',
    f5: false,
    f6: 'gold',
    f7: 'not-an-address',
    nope: 'x',
  });
  assert.deepEqual(values, {}, 'nothing accepted while there are problems in those fields');
  assert.deepEqual(
    problems.map((p) => [p.field, p.code]),
    [
      ['f2', 'too_long'],
      ['f3', 'invalid_type'],
      ['f4', 'invalid_type'],
      ['f5', 'field_required'],
      ['f6', 'invalid_enum'],
      ['f7', 'pattern_mismatch'],
      ['nope', 'unknown_field'],
    ],
  );
  assert.match(problems[3]!.message, /I agree/, 'a required field is named by its label');
});

test('pattern, range and required-empty each have their code', () => {
  const { problems } = checkSignerValues(FIELDS, { f2: 'abc', f3: 11, f4: '  ', f6: 'pro' });
  assert.deepEqual(
    problems.map((p) => [p.field, p.code]),
    [
      ['f2', 'pattern_mismatch'],
      ['f3', 'out_of_range'],
      ['f4', 'field_required'],
      ['f5', 'field_required'],
    ],
  );
});

test('good values are accepted, trimmed and turned into stamp text', () => {
  const { problems, values } = checkSignerValues(FIELDS, {
    f2: ' ACME ',
    f3: 7.5,
    f4: '2024-02-29',
    f5: true,
    f6: 'pro',
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(values, {
    f2: { value: 'ACME', text: 'ACME' },
    f3: { value: 7.5, text: '7.5' },
    f4: { value: '2024-02-29', text: '2024-02-29' },
    f5: { value: true, text: '✓' },
    f6: { value: 'pro', text: 'pro' },
  });
  assert.equal(stampText(true), '✓');
  assert.equal(stampText(false), '');
  assert.equal(stampText(3), '3');
  assert.equal(stampText(undefined), '');
});

test('signature, initials and the date of signing take no value from the signer', () => {
  const { problems } = checkSignerValues(FIELDS, {
    f1: 'forged',
    f2: 'ACME',
    f3: 1,
    f4: '2026-01-01',
    f5: true,
    f6: 'basic',
    f8: '1999-01-01',
  });
  assert.deepEqual(
    problems.map((p) => [p.field, p.code]),
    [
      ['f1', 'readonly_field'],
      ['f8', 'readonly_field'],
    ],
  );
});

test('fields from before typed fields: text is required, a date is the date of signing', () => {
  assert.deepEqual(signerInputOf(field('a', 'text')), { type: 'text', required: true });
  assert.equal(signerInputOf(field('b', 'date')), null);
  assert.equal(signerInputOf(field('c', 'initials')), null);
  assert.deepEqual(signerInputOf(field('d', 'checkbox')), { type: 'checkbox', required: false });
  const legacy = [field('a', 'text'), field('d', 'checkbox')];
  assert.deepEqual(
    checkSignerValues(legacy, {}).problems.map((p) => p.code),
    ['field_required'],
    'an unticked optional checkbox is fine',
  );
  assert.deepEqual(checkSignerValues(legacy, { a: 'x', d: false }).values, {
    a: { value: 'x', text: 'x' },
    d: { value: false, text: '' },
  });
});

test('checkValue and isCalendarDate on their own', () => {
  assert.ok(isCalendarDate('2000-02-29'), '2000 is a leap year');
  assert.ok(!isCalendarDate('1900-02-29'), '1900 is not');
  assert.ok(!isCalendarDate('2026-13-01'), 'no month 13');
  assert.deepEqual(checkValue({ type: 'number' }, Number.NaN, 'x').valueOf(), {
    code: 'invalid_type',
    message: 'x must be a number.',
  });
  assert.deepEqual(checkValue({ type: 'signature' }, 'a', 'x'), {
    code: 'invalid_type',
    message: 'x cannot be given a value.',
  });
});

test('templateInputError lists every problem in meta and counts them in the message', () => {
  const { problems } = checkSignerValues(FIELDS, {});
  const err = templateInputError(problems);
  assert.equal(err.status, 422);
  assert.equal(err.code, 'template_input_invalid');
  assert.equal((err.meta as { problems: unknown[] }).problems.length, 5);
  assert.match(err.message, /^5 field values are invalid: .* See meta\.problems for the other 4\.$/);
});
