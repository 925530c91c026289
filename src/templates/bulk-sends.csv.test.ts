// The CSV reader on its own: RFC 4180 quoting, line endings, BOM and strict UTF-8, and the header's columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../lib/errors.js';
import { csvColumns, csvRow, decodeCsv, exampleColumns, exampleCsv, parseCsv } from './bulk-sends.csv.js';
import { SLOTS } from './testing/fixtures.js';

const FIELDS = [
  { key: 'client_name', type: 'text', slot: 'sender', required: true },
  { key: 'seats', type: 'number', slot: 'sender' },
  { key: 'ok', type: 'checkbox', slot: 'sender' },
  { key: 'sig_client', type: 'signature', slot: 'client' },
] as never[];

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, `an ApiError: ${String(err)}`);
    return { code: err.code, status: err.status, message: err.message, meta: err.meta };
  }
  return assert.fail('not refused');
};

test('RFC 4180: quoted commas, doubled quotes, line breaks inside quotes, CRLF or LF, empty cells', () => {
  const text = 'a,b,c\r\n"x, y","say ""hi""","two\r\nlines"\n,,\n"",z,\r\n\r\n';
  assert.deepEqual(parseCsv(text), [
    ['a', 'b', 'c'],
    ['x, y', 'say "hi"', 'two\r\nlines'],
    ['', '', ''],
    ['', 'z', ''],
  ]);
  assert.deepEqual(parseCsv('a,b'), [['a', 'b']], 'no final line break');
});

test('broken quoting is refused with the line it is on', () => {
  assert.equal(refusal(() => parseCsv('a,b\n1,"open\n2,3\n')).meta?.line, 2);
  assert.equal(refusal(() => parseCsv('a,b\n1,2\n3,"x"y\n')).meta?.line, 3);
  assert.equal(refusal(() => parseCsv('a,b\nsa"y,1\n')).code, 'invalid_request');
  assert.equal(refusal(() => parseCsv('a\n1\n2\n3\n', 3)).meta?.field, 'rows', 'more records than allowed');
});

test('UTF-8 with or without BOM; anything else is refused', () => {
  assert.equal(decodeCsv(Buffer.from('\uFEFFJosé', 'utf8')), 'José');
  assert.equal(decodeCsv(Buffer.from('José', 'utf8')), 'José');
  assert.equal(refusal(() => decodeCsv(Buffer.from('Jos\xe9', 'latin1'))).status, 400);
});

test('the header: slot columns and sender fields; unknown, duplicate and missing columns are refused', () => {
  const cols = csvColumns(
    ['client.name', ' client.email ', 'provider.name', 'client_name', 'seats', 'ok'],
    SLOTS,
    FIELDS,
  );
  assert.deepEqual(
    csvRow(['Ada', 'ada@example.com', '', 'Ada Ltd', '12', 'yes'], cols),
    {
      input: {
        recipients: [{ slot: 'client', name: 'Ada', email: 'ada@example.com' }],
        field_values: { client_name: 'Ada Ltd', seats: 12, ok: true },
      },
    },
    'a blank slot is left out; numbers and checkboxes are typed',
  );
  assert.equal(csvRow(['Ada', 'ada@example.com'], cols).problems?.[0]?.code, 'invalid_request', 'too few cells');
  assert.deepEqual(refusal(() => csvColumns(['client.name', 'client_name', 'sig_client'], SLOTS, FIELDS)).meta, {
    field: 'body',
    columns: ['sig_client'],
  });
  assert.match(
    refusal(() => csvColumns(['client.name', 'client.name', 'client_name'], SLOTS, FIELDS)).message,
    /twice/,
  );
  assert.deepEqual(refusal(() => csvColumns(['client.email'], SLOTS, FIELDS)).meta?.columns, [
    'client.name',
    'client_name',
  ]);
});

test("the example CSV is csvColumns' inverse: every column read back, one good row, read-only fields left out", () => {
  const fields = [
    ...FIELDS,
    { key: 'plan', type: 'enum', slot: 'sender', required: true, options: ['pro, yearly', 'basic'] },
    { key: 'stamp', type: 'text', slot: 'sender', readonly: true, default: 'Fixed' },
  ] as never[];
  const columns = exampleColumns(SLOTS, fields);
  assert.deepEqual(columns, [
    ...SLOTS.flatMap((s) => ['name', 'email', 'phone', 'channel'].map((a) => `${s.name}.${a}`)),
    'client_name',
    'seats',
    'ok',
    'plan',
  ]);
  const text = exampleCsv(SLOTS, fields);
  assert.ok(text.endsWith('\r\n'), 'CRLF line ends');
  const [header, row, ...rest] = parseCsv(text);
  assert.deepEqual(rest, []);
  assert.deepEqual(header, columns);
  const read = csvRow(row!, csvColumns(header!, SLOTS, fields));
  assert.equal(read.problems, undefined, JSON.stringify(read.problems));
  assert.deepEqual(read.input!.field_values, { client_name: 'Example', seats: 1, ok: true, plan: 'pro, yearly' });
  assert.deepEqual(
    read.input!.recipients.map((r) => [r.slot, r.email, r.channel]),
    SLOTS.map((s, i) => [s.name, `person${i + 1}@example.com`, 'email']),
  );
});
