import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../lib/errors.js';
import { findAnchors } from './anchors.js';
import { inspectPdf } from './ingest.js';
import {
  ANCHOR_FIELD_MIN,
  type CoordinateField,
  MIN_FIELD_SIZE,
  preparePdf,
  type PlacementInput,
} from './placement.js';
import { closePdfWorkers } from './pool.js';
import { makePdf } from './testing/fixtures.js';
import { darkest, pdfScratch, type PdfScratch } from './testing/tools.js';
import type { Box } from './types.js';

let tmp: PdfScratch;
before(async () => {
  tmp = await pdfScratch('signet-placement-');
});
after(async () => {
  await tmp.cleanup();
  await closePdfWorkers();
});

const qpdfCheck = (pdf: Uint8Array) => assert.match(tmp.qpdfCheck(pdf), /No syntax or stream encoding errors found/);

/** No object streams, a classic xref table: what the seal's incremental update needs. */
const assertClassicXref = (pdf: Uint8Array) => {
  const s = Buffer.from(pdf).toString('latin1');
  assert.doesNotMatch(s, /\/ObjStm/);
  assert.doesNotMatch(s, /\/Type\s*\/XRef/);
  assert.match(s, /\nxref\n0 \d+\n/);
};

const pdftotext = (pdf: Uint8Array, page?: number): string => tmp.pdfText(pdf, { page, layout: true });

async function refused(p: Promise<unknown>, code: string, meta?: Record<string, unknown>): Promise<ApiError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  if (meta)
    for (const [k, v] of Object.entries(meta))
      assert.deepEqual(err.meta?.[k], v, `meta.${k} (${JSON.stringify(err.meta)})`);
  return err;
}

// ---- anchors ----

test('anchors: fields f1.. at the markers, grown to the minimum size from the marker bottom-left', async () => {
  const pdf = await makePdf({
    text: [
      ['Agreement', '{{signature:Buyer}}', '{{date:Buyer}}'],
      ['{{initials:Seller}}', '{{signature:Seller}}', '{{text:Seller}}'],
    ],
  });
  const anchors = await findAnchors(pdf);
  const r = await preparePdf(pdf, { mode: 'anchors', roles: ['Buyer', 'Seller'] });
  assert.equal(r.pageCount, 2);
  assert.deepEqual(
    r.fields.map((f) => [f.id, f.type, f.role, f.page]),
    [
      ['f1', 'signature', 'Buyer', 1],
      ['f2', 'date', 'Buyer', 1],
      ['f3', 'initials', 'Seller', 2],
      ['f4', 'signature', 'Seller', 2],
      ['f5', 'text', 'Seller', 2],
    ],
  );
  r.fields.forEach((f, i) => {
    const a = anchors[i].box;
    const min = ANCHOR_FIELD_MIN[f.type];
    assert.equal(f.width, Math.max(a.width, min.width), f.id);
    assert.equal(f.height, Math.max(a.height, min.height), f.id);
    assert.equal(f.x, a.x, f.id);
    assert.ok(Math.abs(f.y + f.height - (a.y + a.height)) < 0.02, `${f.id}: bottom edge stays on the marker's`);
  });
  qpdfCheck(r.pdf);
  assertClassicXref(r.pdf);
});

test('anchors: markers leave the rendered page and the text layer (as placement.ts documents)', async () => {
  const marker = '{{signature:Buyer}}';
  const pdf = await makePdf({
    text: [['Visible body text', marker, `Signature: ${marker.replace('Buyer', 'Seller')}`]],
  });
  const [a] = await findAnchors(pdf);
  const other: Box = { x: 72, y: 72 - 11.4, width: 80, height: 14.4 }; // "Visible body text" on line 0
  const before = tmp.render(pdf);
  assert.ok(darkest(before, a.box) < 100, 'the marker is visible before placement');
  const r = await preparePdf(pdf, { mode: 'anchors', roles: ['Buyer', 'Seller'] });
  const after = tmp.render(r.pdf);
  assert.equal(darkest(after, a.box), 255, 'the marker box is pure white after placement');
  assert.ok(darkest(after, other) < 100, 'other text is untouched');
  const text = pdftotext(r.pdf);
  assert.match(text, /Visible body text/);
  assert.match(text, /Signature:/, 'the text sharing a run with a marker stays');
  assert.doesNotMatch(text, /\{\{|signature:/, 'no marker text is left');
});

test('anchors: masking lands on the marker on a page rotated 90° and on a cropped page', async () => {
  for (const opts of [
    { rotate: 90 },
    { rotate: 270 },
    { cropBox: [40, 40, 500, 700] as [number, number, number, number] },
  ]) {
    const pdf = await makePdf({ ...opts, text: [[{ text: '{{signature:A}}', x: 150, y: 400 }]] });
    const [a] = await findAnchors(pdf);
    assert.ok(darkest(tmp.render(pdf), a.box) < 100, `${JSON.stringify(opts)}: visible before`);
    const r = await preparePdf(pdf, { mode: 'anchors', roles: ['A'] });
    assert.equal(darkest(tmp.render(r.pdf), a.box), 255, `${JSON.stringify(opts)}: masked after`);
    qpdfCheck(r.pdf);
  }
});

test('anchors: problems surface as their ApiErrors through the worker', async () => {
  await refused(
    preparePdf(await makePdf({ text: [['no markers']] }), { mode: 'anchors', roles: ['A'] }),
    'no_anchors_found',
    { reason: 'no_markers' },
  );
  await refused(preparePdf(await makePdf(), { mode: 'anchors', roles: ['A'] }), 'no_anchors_found', {
    reason: 'no_text',
  });
  const pdf = await makePdf({ text: [['{{signature:A}}', '{{signature:Z}}']] });
  await refused(preparePdf(pdf, { mode: 'anchors', roles: ['A'] }), 'unknown_role', { role: 'Z' });
  await refused(preparePdf(pdf, { mode: 'anchors', roles: ['A', 'Z', 'B'] }), 'signer_has_no_anchor', { role: 'B' });
  await refused(
    preparePdf(await makePdf({ text: [['{{date:A}}', '{{date:A}}', '{{signature:A}}']] }), {
      mode: 'anchors',
      roles: ['A'],
    }),
    'duplicate_anchor',
    {
      role: 'A',
      type: 'date',
      page: 1,
    },
  );
});

test('an unknown mode or a bad role list is invalid_request before the PDF is read', async () => {
  const junk = new TextEncoder().encode('not a pdf');
  await refused(preparePdf(junk, { mode: 'manual' } as unknown as PlacementInput), 'invalid_request', {
    field: 'placement',
  });
  await refused(preparePdf(junk, { mode: 'anchors', roles: [''] }), 'invalid_request', { field: 'signers' });
  await refused(preparePdf(junk, { mode: 'auto_append', signers: [] }), 'invalid_request', { field: 'signers' });
  await refused(
    preparePdf(junk, { mode: 'auto_append', signers: [{ role: 'A', name: 'Ana', email: '' }] }),
    'invalid_request',
    { field: 'signers[0].email' },
  );
});

// ---- auto_append ----

const signers = (k: number) =>
  Array.from({ length: k }, (_, i) => ({
    role: `R${i + 1}`,
    name: `Signer Number${i + 1}`,
    email: `s${i + 1}@example.com`,
  }));

test('auto_append: one more page, a signature and a date field per signer on it, labels printed', async () => {
  const pdf = await makePdf({ pages: 2, text: [['Body'], ['More']] });
  const r = await preparePdf(pdf, { mode: 'auto_append', signers: signers(2) });
  assert.equal(r.pageCount, 3);
  assert.equal((await inspectPdf(r.pdf)).pageCount, 3);
  assert.deepEqual(
    r.fields.map((f) => [f.id, f.role, f.type, f.page]),
    [
      ['f1', 'R1', 'signature', 3],
      ['f2', 'R1', 'date', 3],
      ['f3', 'R2', 'signature', 3],
      ['f4', 'R2', 'date', 3],
    ],
  );
  for (const f of r.fields)
    assert.ok(f.x >= 0 && f.y >= 0 && f.x + f.width <= 612 && f.y + f.height <= 792, JSON.stringify(f));
  assert.ok(r.fields[2].y >= r.fields[0].y + r.fields[0].height, 'blocks do not overlap');
  const last = pdftotext(r.pdf, 3);
  assert.match(last, /Signatures/);
  assert.match(last, /Signature — Signer Number1 \(R1\)/);
  assert.match(last, /Signature — Signer Number2 \(R2\)/);
  assert.doesNotMatch(pdftotext(r.pdf, 1), /Signature —/);
  qpdfCheck(r.pdf);
  assertClassicXref(r.pdf);
});

test('auto_append: many signers continue on more pages; a tiny last page gets Letter-size signature pages', async () => {
  const r = await preparePdf(await makePdf(), { mode: 'auto_append', signers: signers(12) });
  assert.ok(r.pageCount >= 3, `pages ${r.pageCount}`);
  const pages = new Set(r.fields.map((f) => f.page));
  assert.ok(!pages.has(1), '!pages.has(1)');
  assert.equal(Math.max(...pages), r.pageCount);
  assert.equal(r.fields.length, 24);
  assert.match(pdftotext(r.pdf, 3), /Signatures \(continued\)/);
  for (const f of r.fields) assert.ok(f.y + f.height <= 792 - 54, `${f.id} stays inside the bottom margin`);

  const tiny = await preparePdf(await makePdf({ size: [200, 200] }), { mode: 'auto_append', signers: signers(1) });
  const info = await inspectPdf(tiny.pdf);
  assert.deepEqual(info.pages[1], { width: 612, height: 792, rotation: 0 });
});

test("auto_append in the request's language: the signature page's words follow the locale", async () => {
  const r = await preparePdf(await makePdf(), { mode: 'auto_append', signers: signers(1), locale: 'de' });
  const last = pdftotext(r.pdf, r.pageCount);
  assert.match(last, /Unterschriften/);
  assert.match(last, /Unterschrift — Signer Number1 \(R1\)/);
  assert.match(last, /Datum/);
  assert.doesNotMatch(last, /Signatures|Date/);
});

test('auto_append on a rotated last page: the new page has its shown size, upright', async () => {
  const r = await preparePdf(await makePdf({ rotate: 90 }), { mode: 'auto_append', signers: signers(1) });
  const info = await inspectPdf(r.pdf);
  assert.deepEqual(info.pages[1], { width: 792, height: 612, rotation: 0 });
  assert.match(pdftotext(r.pdf, 2), /Signature — Signer Number1/);
});

test('auto_append keeps object-stream input working and saves a classic xref', async () => {
  const r = await preparePdf(await makePdf({ objectStreams: true }), { mode: 'auto_append', signers: signers(1) });
  qpdfCheck(r.pdf);
  assertClassicXref(r.pdf);
});

// ---- coordinates ----

const field = (o: Partial<CoordinateField> = {}): CoordinateField => ({
  role: 'A',
  type: 'signature',
  page: 1,
  x: 72,
  y: 600,
  width: 200,
  height: 50,
  ...o,
});

test('coordinates: valid fields are kept as given, ids in order, PDF unchanged in content', async () => {
  const pdf = await makePdf({ pages: 2, rotate: [0, 90], text: [['Page one'], ['Page two']] });
  const fields = [
    field(),
    field({ type: 'date', x: 300, y: 650, width: 100, height: 20 }),
    field({ role: 'B', page: 2, x: 792 - 150, y: 612 - 40, width: 150, height: 40 }), // exactly at the shown corner
    field({ role: 'B', type: 'text', page: 2, x: 0, y: 0, width: MIN_FIELD_SIZE, height: MIN_FIELD_SIZE }),
  ];
  const r = await preparePdf(pdf, { mode: 'coordinates', fields, roles: ['A', 'B'] });
  assert.equal(r.pageCount, 2);
  assert.deepEqual(
    r.fields,
    fields.map((f, i) => ({ id: `f${i + 1}`, ...f })),
  );
  assert.match(pdftotext(r.pdf), /Page one[\s\S]*Page two/);
  qpdfCheck(r.pdf);
  assertClassicXref(r.pdf);
});

test('coordinates: fields off the page are invalid_request with meta.field and the page size', async () => {
  const pdf = await makePdf({ pages: 2, rotate: [0, 90] });
  const run = (f: CoordinateField, i = 0) => {
    const fields = [field({ x: 10, y: 10 }), field({ x: 10, y: 10 })];
    fields[i] = f;
    return preparePdf(pdf, { mode: 'coordinates', fields, roles: ['A'] });
  };
  const size = { page_width: 612, page_height: 792 };
  await refused(run(field({ x: 612 })), 'invalid_request', { field: 'placement.fields[0].x', ...size });
  await refused(run(field({ y: 792 }), 1), 'invalid_request', { field: 'placement.fields[1].y', ...size });
  await refused(run(field({ x: 500, width: 200 })), 'invalid_request', { field: 'placement.fields[0].width', ...size });
  await refused(run(field({ y: 760, height: 50 })), 'invalid_request', {
    field: 'placement.fields[0].height',
    ...size,
  });
  // The rotated page is 792 × 612 as shown: y 600 + 50 runs off its bottom although it fits the unrotated page.
  await refused(run(field({ page: 2, y: 600, height: 50 })), 'invalid_request', {
    field: 'placement.fields[0].height',
    page_width: 792,
    page_height: 612,
  });
  await refused(run(field({ x: -1 })), 'invalid_request', { field: 'placement.fields[0].x' });
  await refused(run(field({ y: Number.NaN })), 'invalid_request', { field: 'placement.fields[0].y' });
});

test('coordinates: page 0, a fractional page and a page past the end are invalid_request on .page', async () => {
  const pdf = await makePdf({ pages: 2 });
  const one = (f: CoordinateField) => preparePdf(pdf, { mode: 'coordinates', fields: [f], roles: ['A'] });
  await refused(one(field({ page: 0 })), 'invalid_request', { field: 'placement.fields[0].page' });
  await refused(one(field({ page: 1.5 })), 'invalid_request', { field: 'placement.fields[0].page' });
  await refused(one(field({ page: 3 })), 'invalid_request', { field: 'placement.fields[0].page', page_count: 2 });
});

test('coordinates: zero or tiny sizes are invalid_request on .width / .height', async () => {
  const pdf = await makePdf();
  const one = (f: CoordinateField) => preparePdf(pdf, { mode: 'coordinates', fields: [f], roles: ['A'] });
  await refused(one(field({ width: 0 })), 'invalid_request', { field: 'placement.fields[0].width' });
  await refused(one(field({ height: 0 })), 'invalid_request', { field: 'placement.fields[0].height' });
  await refused(one(field({ height: MIN_FIELD_SIZE - 0.1 })), 'invalid_request', {
    field: 'placement.fields[0].height',
  });
  await refused(one(field({ type: 'stamp' as CoordinateField['type'] })), 'invalid_request', {
    field: 'placement.fields[0].type',
  });
  await refused(one(field({ role: '' })), 'invalid_request', { field: 'placement.fields[0].role' });
  await refused(preparePdf(pdf, { mode: 'coordinates', fields: [], roles: ['A'] }), 'invalid_request', {
    field: 'placement.fields',
  });
});

test('coordinates: an unknown role is unknown_role (meta.role, not meta.field); a signer with no signature field is signer_has_no_anchor', async () => {
  const pdf = await makePdf();
  const e1 = await refused(
    preparePdf(pdf, { mode: 'coordinates', fields: [field(), field({ role: 'Ghost', y: 100 })], roles: ['A'] }),
    'unknown_role',
    { role: 'Ghost' },
  );
  assert.equal(e1.meta?.field, undefined);
  await refused(
    preparePdf(pdf, {
      mode: 'coordinates',
      fields: [field(), field({ role: 'B', type: 'date', y: 100, height: 20 })],
      roles: ['A', 'B'],
    }),
    'signer_has_no_anchor',
    { role: 'B' },
  );
});
