// The template editor's pure parts: markers offered as rows, the rows (as posted) read back as the API's definition,
// the JSON seam, and the upload keys that name their workspace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../lib/errors.js';
import {
  definitionFromJson,
  definitionFromRows,
  definitionOf,
  formOf,
  rowsFromMarkers,
  rowsFromVersion,
  uploadId,
  uploadKind,
  withSpares,
} from './template-editor.js';

const marker = (text: string, page = 1) => ({ text, page, box: { x: 1, y: 2, width: 3, height: 4 }, count: 1 });

test('markers become rows: typed markers keep type and slot, sig_<slot> is a signature, dates by name', () => {
  const r = rowsFromMarkers([
    marker('{{client_name}}'),
    marker('{{start_date}}'),
    marker('{{sig_client}}', 2),
    marker('{{signature:provider}}', 2),
    marker('{{Client Ref #}}'),
    marker('{{client/name}}'),
  ]);
  assert.deepEqual(
    r.fields.map((f) => [f.key, f.type, f.slot, f.anchor, f.required]),
    [
      ['client_name', 'text', 'sender', '{{client_name}}', 'on'],
      ['start_date', 'date', 'sender', '{{start_date}}', 'on'],
      ['sig_client', 'signature', 'client', '{{sig_client}}', 'on'],
      ['signature_provider', 'signature', 'provider', '{{signature:provider}}', 'on'],
      ['Client_Ref_', 'text', 'sender', '{{Client Ref #}}', 'on'],
      ['client_name_2', 'text', 'sender', '{{client/name}}', 'on'],
    ],
  );
  assert.deepEqual(r.slots, [
    { name: 'client', order: '1' },
    { name: 'provider', order: '1' },
  ]);
});

test('posted rows read back: blank rows dropped, anchor or box, numbers and choices parsed', () => {
  const body = {
    name: ' Services ',
    upload: 'upload/0123456789abcdef0123456789abcdef',
    's.0.name': 'client',
    's.0.order': '2',
    's.1.name': '',
    's.1.order': '',
    'f.0.key': 'plan',
    'f.0.type': 'enum',
    'f.0.slot': 'sender',
    'f.0.required': 'on',
    'f.0.options': 'basic, pro,, gold',
    'f.0.anchor': '{{plan}}',
    'f.0.page': '1',
    'f.0.x': '5',
    'f.1.key': 'sig',
    'f.1.type': 'signature',
    'f.1.slot': 'client',
    'f.1.max_length': '',
    'f.1.page': '2',
    'f.1.x': '10.5',
    'f.1.y': '20',
    'f.1.w': '150',
    'f.1.h': '40',
    'f.2.key': '',
    'f.2.type': 'text',
  };
  const form = formOf(body);
  assert.equal(form.name, 'Services');
  assert.equal(form.fields.length, 3, 'every posted row is kept (to show again)');
  assert.equal(withSpares(form).fields.length, 2 + 3, 'blank rows replaced by the spares');
  assert.deepEqual(definitionFromRows(form), {
    slots: [{ name: 'client', signing_order: 2 }],
    fields: [
      {
        key: 'plan',
        type: 'enum',
        slot: 'sender',
        required: true,
        options: ['basic', 'pro', 'gold'],
        anchor: '{{plan}}',
      },
      {
        key: 'sig',
        type: 'signature',
        slot: 'client',
        required: false,
        page: 2,
        box: { x: 10.5, y: 20, width: 150, height: 40 },
      },
    ],
  });
  assert.throws(
    () => definitionFromRows(formOf({ ...body, 'f.1.x': 'ten' })),
    (err: unknown) => err instanceof ApiError && /fields\[1\] \(sig\)\.box\.x must be a number/.test(err.message),
  );
});

test('the seam: a definition posted as JSON replaces the rows; bad JSON is a readable refusal', () => {
  const def = { slots: [{ name: 'a' }], fields: [{ key: 'k', type: 'signature', slot: 'a', anchor: '{{k}}' }] };
  const rows = formOf({ 'f.0.key': 'other', 'f.0.type': 'text' });
  assert.deepEqual(definitionOf({ definition: JSON.stringify(def) }, rows), def);
  assert.equal(definitionOf({ definition: ' ' }, rows).fields[0]!.key, 'other', 'blank: the rows');
  assert.throws(() => definitionFromJson('{'), /not JSON/);
});

test('a published version as rows: its box shown, anchor kept, rules as typed text', () => {
  const r = rowsFromVersion(
    [{ name: 'client', signing_order: 1 }],
    [
      {
        key: 'plan',
        type: 'enum',
        slot: 'sender',
        required: true,
        readonly: false,
        options: ['a', 'b'],
        max_length: 9,
        anchor: '{{plan}}',
        page: 1,
        box: { x: 1, y: 2, width: 3, height: 4 },
      },
    ],
  );
  assert.deepEqual(r.slots, [{ name: 'client', order: '1' }]);
  assert.deepEqual(
    [r.fields[0]!.options, r.fields[0]!.max_length, r.fields[0]!.anchor, r.fields[0]!.w, r.fields[0]!.required],
    ['a, b', '9', '{{plan}}', '3', 'on'],
  );
});

test('an upload key names its workspace: one kind per workspace, letters only; only that shape is read', () => {
  const a = uploadKind('ws_0123456789abcdef01234567');
  assert.match(a, /^upload-[a-p]{24}$/, 'a blob kind is letters (the blob store’s key shape)');
  assert.equal(uploadKind('ws_0123456789abcdef01234567'), a, 'the same workspace, the same kind');
  assert.notEqual(uploadKind('ws_0123456789abcdef01234568'), a, 'another workspace, another kind');
  const hex = '0123456789abcdef0123456789abcdef';
  assert.equal(uploadId(`${a}/${hex}`), hex);
  assert.equal(uploadId(`upload/${hex}`), null, 'the old, workspace-less shape is not read');
  assert.equal(uploadId(`original/${hex}`), null, 'nor any other blob');
  assert.equal(uploadId(`${a}/${hex}/../x`), null);
});
