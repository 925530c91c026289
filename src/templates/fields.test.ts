import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../lib/errors.js';
import { MAX_FIELD_VALUE_LENGTH } from '../limits.js';
import { templateInputError } from '../documents/fields.js';
import { checkFieldDefinitions, stampKind, validateFieldValues } from './fields.js';
import type { SlotIn, TemplateFieldIn } from './templates.schemas.js';

function assertApiError(fn: () => unknown, code: string, meta?: Record<string, unknown>): ApiError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
  assert.equal(err.code, code);
  if (meta) assert.deepEqual(err.meta, meta);
  return err;
}

const BOX = { x: 72, y: 100, width: 120, height: 20 };
/** A field placed by coordinates on page 1, unless the overrides say otherwise. */
const field = (key: string, over: Partial<TemplateFieldIn> = {}): TemplateFieldIn => ({
  key,
  type: 'text',
  slot: 'sender',
  page: 1,
  box: BOX,
  ...over,
});
const SLOTS: SlotIn[] = [{ name: 'buyer' }, { name: 'seller' }];
const SIGNATURES = [
  field('buyer_sig', { type: 'signature', slot: 'buyer', page: undefined, box: undefined, anchor: '{{sig:buyer}}' }),
  field('seller_sig', { type: 'signature', slot: 'seller' }),
];
/** Publishes one extra field (at index 2, after the two signatures). */
const publish = (f: TemplateFieldIn) => () => checkFieldDefinitions([...SIGNATURES, f], SLOTS);
const invalidAt = (fn: () => unknown, field: string) => assertApiError(fn, 'invalid_request', { field });

// ── checkFieldDefinitions ────────────────────────────────────────────────────────────────────────────────────────
test('a well-formed template publishes', () => {
  checkFieldDefinitions(
    [
      ...SIGNATURES,
      field('buyer_initials', { type: 'initials', slot: 'buyer' }),
      field('name', { required: true, max_length: 40, pattern: '[A-Za-z ]+' }),
      field('plan', { type: 'enum', options: ['basic', 'pro'], default: 'basic' }),
      field('seats', { type: 'number', min: 1, max: 50, default: 5 }),
      field('start', { type: 'date', default: '2024-02-29' }),
      field('terms', { type: 'checkbox', default: true, readonly: true }),
      field('contact', { type: 'email', pattern: '.+@example\\.com' }),
      field('note', { type: 'text', slot: 'seller', required: true }),
    ],
    SLOTS,
  );
  // Sender-only templates (generated documents) have no slots at all; a slot without fields is allowed.
  checkFieldDefinitions([field('name')], []);
  checkFieldDefinitions([field('name')], [{ name: 'witness' }]);
});

test('slot names are unique and none is "sender"', () => {
  invalidAt(() => checkFieldDefinitions([field('a')], [{ name: 'buyer' }, { name: 'buyer' }]), 'slots[1].name');
  const err = invalidAt(() => checkFieldDefinitions([field('a')], [{ name: 'sender' }]), 'slots[0].name');
  assert.match(err.message, /slots\[0\]\.name/);
});

test('field keys are unique', () => {
  invalidAt(() => checkFieldDefinitions([field('a'), field('b'), field('a')], []), 'fields[2].key');
});

test('a field on an undeclared slot is unknown_role, naming the role and the key', () => {
  const err = assertApiError(
    () => checkFieldDefinitions([field('sig', { type: 'signature', slot: 'notary' })], SLOTS),
    'unknown_role',
    { role: 'notary', field: 'sig' },
  );
  assert.equal(err.status, 400);
});

test('a sender field cannot be a signature or initials', () => {
  invalidAt(publish(field('s', { type: 'signature' })), 'fields[2].type');
  invalidAt(publish(field('i', { type: 'initials' })), 'fields[2].type');
});

test('a field has exactly one placement: an anchor, or page with box', () => {
  invalidAt(publish(field('a', { anchor: '{{a}}' })), 'fields[2].anchor'); // both
  invalidAt(publish(field('a', { anchor: '{{a}}', box: undefined })), 'fields[2].anchor'); // anchor and page
  invalidAt(publish(field('a', { page: undefined, box: undefined })), 'fields[2].anchor'); // neither
  invalidAt(publish(field('a', { box: undefined })), 'fields[2].box'); // page without box
  invalidAt(publish(field('a', { page: undefined })), 'fields[2].box'); // box without page
  checkFieldDefinitions([field('a', { page: undefined, box: undefined, anchor: '{{a}}' })], []);
});

test('a box is finite, starts at x, y ≥ 0 and is at least 5 points each way', () => {
  for (const box of [
    { ...BOX, width: 4.9 },
    { ...BOX, height: 0 },
    { ...BOX, x: -1 },
    { ...BOX, y: -0.5 },
    { ...BOX, x: Infinity },
    { ...BOX, width: NaN },
  ])
    invalidAt(publish(field('a', { box })), 'fields[2].box');
  checkFieldDefinitions([field('a', { box: { x: 0, y: 0, width: 5, height: 5 } })], []);
});

test('options: only on enum, required there, each listed once', () => {
  const err = invalidAt(publish(field('e', { type: 'enum', options: ['a', 'b', 'a'] })), 'fields[2].options');
  assert.equal(err.message, 'fields[2].options must list each option once.');
  invalidAt(publish(field('e', { type: 'enum' })), 'fields[2].options');
  invalidAt(publish(field('e', { type: 'enum', options: [] })), 'fields[2].options');
  invalidAt(publish(field('e', { type: 'enum', options: ['a', ' b'] })), 'fields[2].options');
  invalidAt(publish(field('t', { type: 'text', options: ['a'] })), 'fields[2].options');
});

test('pattern: only on text and email, must compile with the u flag, must be safe from catastrophic backtracking', () => {
  invalidAt(publish(field('n', { type: 'number', pattern: '\\d+' })), 'fields[2].pattern');
  invalidAt(publish(field('e', { type: 'enum', options: ['a'], pattern: 'a' })), 'fields[2].pattern');
  invalidAt(publish(field('t', { pattern: '(unclosed' })), 'fields[2].pattern');
  invalidAt(publish(field('t', { pattern: '\\c' })), 'fields[2].pattern'); // legal without u, not with it
  const err = invalidAt(publish(field('t', { pattern: '(a+)+$' })), 'fields[2].pattern');
  assert.match(err.message, /exponential/);
  invalidAt(publish(field('t', { type: 'email', pattern: '(x+x+)+y' })), 'fields[2].pattern');
  checkFieldDefinitions([field('t', { pattern: '[A-Z]{2}-\\d{4}' }), field('u', { pattern: '\\p{L}+' })], []);
});

test('min and max: only on number, min ≤ max', () => {
  invalidAt(publish(field('t', { min: 1 })), 'fields[2].min');
  invalidAt(publish(field('t', { type: 'date', max: 1 })), 'fields[2].max');
  invalidAt(publish(field('n', { type: 'number', min: 10, max: 9 })), 'fields[2].max');
  checkFieldDefinitions([field('n', { type: 'number', min: 3, max: 3 })], []);
});

test('max_length: only on text and email', () => {
  invalidAt(publish(field('e', { type: 'enum', options: ['a'], max_length: 5 })), 'fields[2].max_length');
  invalidAt(publish(field('n', { type: 'number', max_length: 5 })), 'fields[2].max_length');
  checkFieldDefinitions([field('e', { type: 'email', max_length: 80 })], []);
});

test('default: not on signature or initials, never on a recipient field, and it passes the field’s own rules', () => {
  invalidAt(publish(field('s', { type: 'signature', slot: 'buyer', default: 'x' })), 'fields[2].default');
  invalidAt(publish(field('d', { type: 'date', slot: 'buyer', default: '2024-01-01' })), 'fields[2].default');
  for (const bad of [
    field('e', { type: 'enum', options: ['a', 'b'], default: 'c' }),
    field('n', { type: 'number', min: 1, max: 10, default: 11 }),
    field('n', { type: 'number', default: '5' }),
    field('c', { type: 'checkbox', default: 'yes' }),
    field('d', { type: 'date', default: '2023-02-29' }),
    field('t', { max_length: 3, default: 'abcd' }),
    field('t', { pattern: '\\d+', default: 'abc' }),
    field('m', { type: 'email', default: 'not an address' }),
    field('t', { default: '   ' }),
  ])
    invalidAt(publish(bad), 'fields[2].default');
});

test('readonly: a sender field needs a default; a recipient field cannot be readonly', () => {
  invalidAt(publish(field('t', { readonly: true })), 'fields[2].readonly');
  invalidAt(publish(field('t', { slot: 'buyer', readonly: true })), 'fields[2].readonly');
  checkFieldDefinitions([...SIGNATURES, field('t', { slot: 'buyer', readonly: false })], SLOTS);
});

test('every slot with fields has a signature field', () => {
  const fields = [SIGNATURES[0]!, field('seller_date', { type: 'date', slot: 'seller' })];
  assertApiError(() => checkFieldDefinitions(fields, SLOTS), 'signer_has_no_anchor', { role: 'seller' });
  const initialsOnly = [SIGNATURES[0]!, field('seller_i', { type: 'initials', slot: 'seller' })];
  assertApiError(() => checkFieldDefinitions(initialsOnly, SLOTS), 'signer_has_no_anchor', { role: 'seller' });
});

test('the first problem is the one thrown', () => {
  // fields[1] repeats a key and fields[2] names an unknown slot: the key comes first.
  invalidAt(() => checkFieldDefinitions([field('a'), field('a'), field('b', { slot: 'x' })], []), 'fields[1].key');
});

// ── validateFieldValues ──────────────────────────────────────────────────────────────────────────────────────────
const TEMPLATE: TemplateFieldIn[] = [
  ...SIGNATURES,
  field('buyer_date', { type: 'date', slot: 'buyer' }),
  field('name', { required: true, max_length: 12 }),
  field('code', { pattern: '[A-Z]{2}-\\d{2}' }),
  field('contact', { type: 'email' }),
  field('work_email', { type: 'email', pattern: '.+@example\\.com' }),
  field('plan', { type: 'enum', options: ['basic', 'pro'], default: 'basic' }),
  field('seats', { type: 'number', min: 1, max: 50 }),
  field('start', { type: 'date' }),
  field('agree', { type: 'checkbox' }),
  field('terms', { type: 'checkbox', readonly: true, default: true }),
  field('city', { default: 'Lyon' }),
  field('free', {}),
];
const problemsOf = (values: Record<string, unknown> | undefined) =>
  validateFieldValues(TEMPLATE, { name: 'Ada', ...values }).problems.map((p) => [p.field, p.code]);

test('valid values resolve to the text stamped on the PDF; defaults fill the gaps', () => {
  const { resolved, problems } = validateFieldValues(TEMPLATE, {
    name: '  Ada Lovelace ',
    code: 'AB-12',
    contact: 'ada@example.org',
    work_email: 'ada@example.com',
    plan: 'pro',
    seats: 12.5,
    start: '2024-02-29',
    agree: true,
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(resolved, {
    name: 'Ada Lovelace',
    code: 'AB-12',
    contact: 'ada@example.org',
    work_email: 'ada@example.com',
    plan: 'pro',
    seats: '12.5',
    start: '2024-02-29',
    agree: '✓',
    terms: '✓',
    city: 'Lyon',
  });
});

test('absent, null and blank values are not given: defaults apply, optional fields stay out, false is omitted', () => {
  const { resolved, problems } = validateFieldValues(TEMPLATE, {
    name: 'Ada',
    plan: null,
    city: '  ',
    free: '',
    agree: false,
    terms: null,
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(resolved, { name: 'Ada', plan: 'basic', terms: '✓', city: 'Lyon' });
});

test('a required sender field without a value or default is field_required', () => {
  for (const values of [undefined, {}, { name: null }, { name: ' \t ' }]) {
    const { problems } = validateFieldValues(TEMPLATE, values);
    assert.deepEqual(problems, [{ field: 'name', code: 'field_required', message: 'field_values.name is required.' }]);
  }
  // A default satisfies `required`.
  const withDefault = [field('x', { required: true, default: 'fallback' })];
  assert.deepEqual(validateFieldValues(withDefault, undefined), { resolved: { x: 'fallback' }, problems: [] });
});

test('unknown keys and recipients’ fields are refused; a readonly field is refused even with its default value', () => {
  assert.deepEqual(problemsOf({ nope: 'x' }), [['nope', 'unknown_field']]);
  assert.deepEqual(problemsOf({ nope: null }), [['nope', 'unknown_field']]);
  assert.deepEqual(problemsOf({ buyer_date: '2024-01-01' }), [['buyer_date', 'readonly_field']]);
  assert.deepEqual(problemsOf({ buyer_sig: 'Ada' }), [['buyer_sig', 'readonly_field']]);
  assert.deepEqual(problemsOf({ terms: true }), [['terms', 'readonly_field']]);
  assert.deepEqual(problemsOf({ terms: false }), [['terms', 'readonly_field']]);
  // Keys that name Object.prototype members are unknown, not fields.
  assert.deepEqual(problemsOf({ constructor: 'x', toString: 'y' }), [
    ['constructor', 'unknown_field'],
    ['toString', 'unknown_field'],
  ]);
});

test('types: strings for text, email, enum and date; a finite number; a boolean', () => {
  assert.deepEqual(problemsOf({ name: 42 }), [['name', 'invalid_type']]);
  assert.deepEqual(problemsOf({ contact: ['a@b.co'] }), [['contact', 'invalid_type']]);
  assert.deepEqual(problemsOf({ plan: 1 }), [['plan', 'invalid_type']]);
  assert.deepEqual(problemsOf({ start: 20240101 }), [['start', 'invalid_type']]);
  assert.deepEqual(problemsOf({ seats: '12' }), [['seats', 'invalid_type']]);
  assert.deepEqual(problemsOf({ seats: Infinity }), [['seats', 'invalid_type']]);
  assert.deepEqual(problemsOf({ seats: NaN }), [['seats', 'invalid_type']]);
  assert.deepEqual(problemsOf({ agree: 'true' }), [['agree', 'invalid_type']]);
  assert.deepEqual(problemsOf({ agree: 1 }), [['agree', 'invalid_type']]);
  assert.deepEqual(problemsOf({ free: { text: 'x' } }), [['free', 'invalid_type']]);
});

test('an enum value must be one of the options', () => {
  const [p] = validateFieldValues(TEMPLATE, { name: 'Ada', plan: 'Pro' }).problems;
  assert.deepEqual(p, {
    field: 'plan',
    code: 'invalid_enum',
    message: 'field_values.plan must be one of: "basic", "pro".',
  });
});

test('text length is counted in code points, against max_length or the global limit', () => {
  assert.deepEqual(problemsOf({ name: 'abcdefghijklm' }), [['name', 'too_long']]);
  // Twelve emoji are 24 UTF-16 units but twelve characters.
  assert.deepEqual(problemsOf({ name: '😀'.repeat(12) }), []);
  assert.deepEqual(problemsOf({ free: 'x'.repeat(MAX_FIELD_VALUE_LENGTH) }), []);
  assert.deepEqual(problemsOf({ free: 'x'.repeat(MAX_FIELD_VALUE_LENGTH + 1) }), [['free', 'too_long']]);
  assert.deepEqual(problemsOf({ contact: `${'a'.repeat(MAX_FIELD_VALUE_LENGTH)}@b.co` }), [['contact', 'too_long']]);
});

test('a pattern must match the whole value; an e-mail must look like an address, and its pattern applies too', () => {
  assert.deepEqual(problemsOf({ code: 'AB-12' }), []);
  assert.deepEqual(problemsOf({ code: 'xAB-12' }), [['code', 'pattern_mismatch']]);
  assert.deepEqual(problemsOf({ code: 'AB-123' }), [['code', 'pattern_mismatch']]);
  for (const bad of ['ada', 'ada@example', 'ada lovelace@example.org', 'a@b@c.org', '@example.org'])
    assert.deepEqual(problemsOf({ contact: bad }), [['contact', 'pattern_mismatch']], bad);
  assert.deepEqual(problemsOf({ work_email: 'ada@example.org' }), [['work_email', 'pattern_mismatch']]);
  // An alternation in the pattern is anchored as a whole.
  const alt = [field('t', { pattern: 'a|b' })];
  assert.equal(validateFieldValues(alt, { t: 'ab' }).problems[0]?.code, 'pattern_mismatch');
  assert.deepEqual(validateFieldValues(alt, { t: 'b' }).resolved, { t: 'b' });
});

test('a date is YYYY-MM-DD and a real calendar date', () => {
  for (const ok of ['2024-02-29', '2000-02-29', '2023-12-31', '1999-01-01'])
    assert.deepEqual(problemsOf({ start: ok }), [], ok);
  for (const bad of ['2023-02-29', '1900-02-29', '2024-04-31', '2024-13-01', '2024-00-10', '2024-1-1', '01/02/2024'])
    assert.deepEqual(problemsOf({ start: bad }), [['start', 'invalid_type']], bad);
});

test('a number below min or above max is out_of_range', () => {
  assert.deepEqual(problemsOf({ seats: 1 }), []);
  assert.deepEqual(problemsOf({ seats: 50 }), []);
  assert.deepEqual(problemsOf({ seats: 0 }), [['seats', 'out_of_range']]);
  assert.deepEqual(problemsOf({ seats: 50.01 }), [['seats', 'out_of_range']]);
});

test('every bad value is reported with its own code, in template order, then unknown keys as given', () => {
  const { problems, resolved } = validateFieldValues(TEMPLATE, {
    zeta: 1,
    seats: 99,
    plan: 'gold',
    name: null,
    buyer_date: '2024-01-01',
    code: 'nope',
    contact: 'x'.repeat(2000),
    work_email: 'ada@example.org',
    start: '2024-02-30',
    terms: true,
    alpha: 'x',
    city: 'Paris',
  });
  assert.deepEqual(
    problems.map((p) => [p.field, p.code]),
    [
      ['buyer_date', 'readonly_field'],
      ['name', 'field_required'],
      ['code', 'pattern_mismatch'],
      ['contact', 'too_long'],
      ['work_email', 'pattern_mismatch'],
      ['plan', 'invalid_enum'],
      ['seats', 'out_of_range'],
      ['start', 'invalid_type'],
      ['terms', 'readonly_field'],
      ['zeta', 'unknown_field'],
      ['alpha', 'unknown_field'],
    ],
  );
  for (const p of problems) assert.match(p.message, new RegExp(`^field_values\\.${p.field} .+\\.$`));
  assert.equal(resolved.city, 'Paris');
  assert.equal(resolved.plan, undefined);

  const err = templateInputError(problems);
  assert.equal(err.status, 422);
  assert.equal(err.code, 'template_input_invalid');
  assert.match(err.message, /^11 field values are invalid: field_values\.buyer_date belongs to slot "buyer"/);
  assert.deepEqual(err.meta, { problems });
});

test('templateInputError with one problem', () => {
  const { problems } = validateFieldValues(TEMPLATE, {});
  const err = templateInputError(problems);
  assert.equal(err.message, '1 field value is invalid: field_values.name is required.');
  assert.deepEqual(err.meta, { problems: [{ field: 'name', code: 'field_required', message: problems[0]!.message }] });
});

test('a key named __proto__ is an ordinary field', () => {
  const fields = [field('__proto__')];
  const { resolved, problems } = validateFieldValues(fields, JSON.parse('{"__proto__": "x"}'));
  assert.deepEqual(problems, []);
  assert.ok(Object.hasOwn(resolved, '__proto__'), "Object.hasOwn(resolved, '__proto__')");
  assert.equal(Object.getOwnPropertyDescriptor(resolved, '__proto__')?.value, 'x');
});

// ── stampKind ────────────────────────────────────────────────────────────────────────────────────────────────────
test('stampKind maps signature, initials and date to themselves and everything else to text', () => {
  assert.equal(stampKind('signature'), 'signature');
  assert.equal(stampKind('initials'), 'initials');
  assert.equal(stampKind('date'), 'date');
  for (const t of ['text', 'number', 'checkbox', 'enum', 'email'] as const) assert.equal(stampKind(t), 'text');
});
