import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ApiError } from '../../lib/errors.js';
import { findAnchors } from './anchors.js';
import { pageGeometry } from './geometry.js';
import { ANCHOR_FIELD_MIN, MIN_FIELD_SIZE } from './placement.js';
import { anchorBox } from './placement.work.js';
import { closePdfWorkers } from './pool.js';
import { stampPdf } from './stamp.js';
import { findTemplateMarkers, placeTemplate, type TemplatePlacementField } from './template-placement.js';
import { anchorPattern } from './template-placement.work.js';
import { type FixtureText, makePdf, makePng } from './testing/fixtures.js';
import { darkest, pdfScratch, type PdfScratch } from './testing/tools.js';
import type { Box } from './types.js';

let tmp: PdfScratch;
let helvetica: { widthOfTextAtSize(text: string, size: number): number };
before(async () => {
  tmp = await pdfScratch('signet-template-placement-');
  helvetica = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
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

const anchored = (key: string, anchor: string, type: TemplatePlacementField['type'] = 'text') => ({
  key,
  type,
  anchor,
});
const boxed = (key: string, page: number, box: Box, type: TemplatePlacementField['type'] = 'text') => ({
  key,
  type,
  page,
  box,
});

/**
 * The marker's box for Helvetica 12 text drawn by makePdf with its baseline at `top` points from the top of an
 * unrotated page (what anchors.ts reports: 0.95 of the size above the baseline, 0.25 below).
 */
const markerBox = (text: string, x: number, top: number, size = 12): Box => ({
  x,
  y: top - 0.95 * size,
  width: helvetica.widthOfTextAtSize(text, size),
  height: 1.2 * size,
});

const near = (a: number, b: number, what: string, tol = 0.05) =>
  assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} ≠ ${b}`);

// ---- anchors ----

test('anchors: each field grows from its marker like signing anchors, markers are removed, fields keep input order', async () => {
  const pdf = await makePdf({
    text: [
      // The marker its own text item (as generated markers are), so its box is exact.
      [{ text: 'Customer: {{customer_name}}', split: [10] }, 'Plain body text'],
      [{ text: '[[SIGN_HERE]]', x: 100, y: 300 }],
    ],
  });
  const before = tmp.render(pdf, 1);
  const r = await placeTemplate(pdf, [
    anchored('sig', '[[SIGN_HERE]]', 'signature'),
    boxed('note', 1, { x: 300, y: 400, width: 120.004, height: 20 }),
    anchored('name', '{{customer_name}}'),
  ]);
  assert.equal(r.pageCount, 2);
  assert.deepEqual(
    r.fields.map((f) => [f.key, f.page]),
    [
      ['sig', 2],
      ['note', 1],
      ['name', 1],
    ],
  );
  const [sig, note, name] = r.fields;
  assert.deepEqual(note, { key: 'note', page: 1, x: 300, y: 400, width: 120, height: 20 }, 'rounded to 0.01 pt');

  // makePdf draws the split pieces in Helvetica, then Helvetica-Bold.
  const nameMarker = markerBox('{{customer_name}}', 72 + helvetica.widthOfTextAtSize('Customer: ', 12), 72);
  const sigMarker = markerBox('[[SIGN_HERE]]', 100, 792 - 300);
  for (const [f, m, type] of [
    [name, nameMarker, 'text'],
    [sig, sigMarker, 'signature'],
  ] as const) {
    const min = ANCHOR_FIELD_MIN[type];
    near(f.x, m.x, `${f.key}.x`, 1);
    near(f.width, Math.max(m.width, min.width), `${f.key}.width`);
    near(f.height, Math.max(m.height, min.height), `${f.key}.height`);
    near(f.y + f.height, m.y + m.height, `${f.key}: the bottom edge stays on the marker's`);
  }

  assert.ok(darkest(before, nameMarker) < 100, 'the marker is visible before');
  const after1 = tmp.render(r.pdf, 1);
  assert.equal(darkest(after1, nameMarker), 255, 'the marker is white after');
  assert.ok(darkest(after1, markerBox('Customer:', 72, 72)) < 100, 'the text before the marker on its line stays');
  assert.ok(darkest(after1, markerBox('Plain body text', 72, 96)) < 100, 'other lines stay');
  assert.equal(darkest(tmp.render(r.pdf, 2), sigMarker), 255, 'page 2 marker is white after');
  const text = tmp.pdfText(r.pdf);
  assert.ok(!text.includes('customer_name') && !text.includes('SIGN_HERE'), 'the markers left the text');
  assert.match(text, /Customer:/, 'the text beside a marker stays');
  qpdfCheck(r.pdf);
  assertClassicXref(r.pdf);
});

test('anchors: whitespace pdf.js puts between characters is tolerated; regex specials are literal', async () => {
  // Each character its own text item, 4 pt apart: pdf.js reports spaces between some of them.
  const spread = (text: string, x: number, y: number): FixtureText[] => {
    let at = x;
    return [...text].map((ch) => {
      const t = { text: ch, x: at, y };
      at += helvetica.widthOfTextAtSize(ch, 12) + 4;
      return t;
    });
  };
  const pdf = await makePdf({
    text: [[...spread('[[SIGN_HERE]]', 72, 700), { text: '{{ due date }}', x: 72, y: 600 }, '{{axb}} (a+b)*']],
  });
  const lines = tmp.pdfText(pdf, { raw: true });
  assert.match(lines, /\[\s+\[/, 'the spread marker has spaces in the extracted text');
  const r = await placeTemplate(pdf, [
    anchored('sig', '[[SIGN_HERE]]', 'signature'),
    anchored('due', '{{due date}}', 'date'),
    anchored('expr', '(a+b)*'),
  ]);
  assert.deepEqual(
    r.fields.map((f) => [f.key, f.page]),
    [
      ['sig', 1],
      ['due', 1],
      ['expr', 1],
    ],
  );
  near(r.fields[0].x, 72, 'sig.x', 1);
  assert.ok(r.fields[0].width >= 150, 'r.fields[0].width >= 150');
  // "." is a dot, not any character: {{a.b}} does not match {{axb}}.
  await refused(placeTemplate(pdf, [anchored('k', '{{a.b}}')]), 'no_anchors_found', { reason: 'no_markers' });
  assert.equal(anchorPattern('{{a.b}}').re.source, '\\{\\s*\\{\\s*a\\s*\\.\\s*b\\s*\\}\\s*\\}');
});

test('anchors: boxes and masks on pages rotated 90° and 270° and on a cropped page match signing anchors', async () => {
  // A template anchor is any literal; this one also reads as a signing marker, so findAnchors gives its exact box.
  const marker = '{{signature:A}}';
  for (const opts of [
    { rotate: 90 },
    { rotate: 270 },
    { cropBox: [40, 40, 500, 700] as [number, number, number, number] },
  ]) {
    const pdf = await makePdf({ ...opts, text: [[{ text: marker, x: 150, y: 400 }]] });
    const [a] = await findAnchors(pdf);
    const r = await placeTemplate(pdf, [anchored('sig', marker, 'signature')]);
    const g = pageGeometry((await PDFDocument.load(pdf)).getPage(0));
    assert.deepEqual(r.fields, [{ key: 'sig', page: 1, ...anchorBox(a.box, 'signature', g) }], JSON.stringify(opts));
    assert.ok(darkest(tmp.render(pdf), a.box) < 100, `${JSON.stringify(opts)}: visible before`);
    assert.equal(darkest(tmp.render(r.pdf), a.box), 255, `${JSON.stringify(opts)}: masked after`);
    qpdfCheck(r.pdf);
  }
});

test('anchors: missing from the PDF is no_anchors_found (no_markers), from a scan (no text at all) no_text', async () => {
  const pdf = await makePdf({ text: [['{{customer_name}}']] });
  const e = await refused(
    placeTemplate(pdf, [anchored('name', '{{customer_name}}'), anchored('x', '{{missing}}')]),
    'no_anchors_found',
  );
  assert.deepEqual(e.meta, { field: 'x', anchor: '{{missing}}', reason: 'no_markers' });
  assert.match(e.message, /\{\{missing\}\}/);

  // A scanned page: one image, no text layer.
  const doc = await PDFDocument.create();
  const page = doc.addPage([612, 792]);
  page.drawImage(await doc.embedPng(makePng(200, 260)), { x: 0, y: 0, width: 612, height: 792 });
  const scan = await doc.save({ useObjectStreams: false });
  assert.equal(tmp.pdfText(scan).trim(), '', 'the fixture has no text');
  const e2 = await refused(placeTemplate(scan, [anchored('sig', '[[SIGN_HERE]]', 'signature')]), 'no_anchors_found');
  assert.deepEqual(e2.meta, { field: 'sig', anchor: '[[SIGN_HERE]]', reason: 'no_text' });
  // A scan is fine for page + box fields.
  const r = await placeTemplate(scan, [boxed('sig', 1, { x: 72, y: 600, width: 200, height: 50 }, 'signature')]);
  assert.equal(r.pageCount, 1);
});

test('anchors: found more than once in the PDF is duplicate_anchor with the pages; so is one anchor in two fields', async () => {
  const pdf = await makePdf({ text: [['{{name}}', 'again {{name}}'], ['body'], ['{{name}}', '{{other}}']] });
  const e = await refused(
    placeTemplate(pdf, [anchored('other', '{{other}}'), anchored('name', '{{name}}')]),
    'duplicate_anchor',
  );
  assert.deepEqual(e.meta, { field: 'name', anchor: '{{name}}', pages: [1, 3] });
  assert.match(e.message, /3 times/);

  // Two fields naming the same anchor (whitespace aside): refused on the second before the PDF is read.
  const junk = new TextEncoder().encode('not a pdf');
  const e2 = await refused(
    placeTemplate(junk, [anchored('a', '{{other}}'), anchored('b', '[[x]]'), anchored('c', '{{ other }}')]),
    'duplicate_anchor',
  );
  assert.deepEqual(e2.meta, { field: 'c', anchor: '{{ other }}', other_field: 'a' });
});

// ---- page + box ----

test('page + box: kept as given (rounded) on any page, rotated pages by their shown size; the PDF is unchanged in content', async () => {
  const pdf = await makePdf({ pages: 2, rotate: [0, 90], text: [['Page one'], ['Page two']], objectStreams: true });
  const r = await placeTemplate(pdf, [
    boxed('a', 1, { x: 72, y: 600, width: 200, height: 50 }, 'signature'),
    boxed('b', 2, { x: 792 - 150, y: 612 - 40, width: 150, height: 40 }, 'initials'), // exactly at the shown corner
    boxed('c', 2, { x: 0, y: 0, width: MIN_FIELD_SIZE, height: MIN_FIELD_SIZE }),
    boxed('d', 1, { x: 10.123456, y: 20.987654, width: 30.5, height: 40.004999 }, 'date'),
  ]);
  assert.deepEqual(r.fields, [
    { key: 'a', page: 1, x: 72, y: 600, width: 200, height: 50 },
    { key: 'b', page: 2, x: 642, y: 572, width: 150, height: 40 },
    { key: 'c', page: 2, x: 0, y: 0, width: 5, height: 5 },
    { key: 'd', page: 1, x: 10.12, y: 20.99, width: 30.5, height: 40 },
  ]);
  assert.equal(r.pageCount, 2);
  assert.match(tmp.pdfText(r.pdf), /Page one[\s\S]*Page two/);
  qpdfCheck(r.pdf);
  assertClassicXref(r.pdf);
});

test('page + box: a page past the end is invalid_request on fields[i].page with page_count', async () => {
  const pdf = await makePdf({ pages: 2 });
  const ok = boxed('a', 1, { x: 72, y: 72, width: 100, height: 20 });
  const e = await refused(
    placeTemplate(pdf, [ok, boxed('b', 3, { x: 72, y: 72, width: 100, height: 20 })]),
    'invalid_request',
  );
  assert.deepEqual(e.meta, { field: 'fields[1].page', page_count: 2 });
  assert.equal(e.message, 'fields[1].page is 3; the PDF has 2 pages.');
  for (const page of [0, 1.5, -1, '1'])
    await refused(placeTemplate(pdf, [{ ...ok, page } as TemplatePlacementField]), 'invalid_request', {
      field: 'fields[0].page',
    });
});

test('page + box: a box off the page is invalid_request on fields[i].box with the shown page size', async () => {
  const pdf = await makePdf({ pages: 2, rotate: [0, 90] });
  const one = (box: Box, page = 1) => placeTemplate(pdf, [boxed('k', page, box)]);
  const size = { page_width: 612, page_height: 792 };
  const cases: [Box, number, RegExp, Record<string, unknown>][] = [
    [
      { x: 612, y: 10, width: 50, height: 20 },
      1,
      /^fields\[0\]\.box\.x is outside the page \(612 points wide\)\.$/,
      size,
    ],
    [{ x: 10, y: 792, width: 50, height: 20 }, 1, /box\.y is outside the page/, size],
    [{ x: 500, y: 10, width: 200, height: 20 }, 1, /^fields\[0\]\.box runs past the right edge of the page\.$/, size],
    [{ x: 10, y: 760, width: 50, height: 50 }, 1, /runs past the bottom/, size],
    // The rotated page is 792 × 612 as shown: y 600 + 50 runs off its bottom although it fits the unrotated page.
    [{ x: 10, y: 600, width: 50, height: 50 }, 2, /runs past the bottom/, { page_width: 792, page_height: 612 }],
    [{ x: -1, y: 10, width: 50, height: 20 }, 1, /box\.x must not be negative/, {}],
    [{ x: 10, y: 10, width: MIN_FIELD_SIZE - 0.1, height: 20 }, 1, /box\.width must be at least 5 points/, {}],
    [{ x: 10, y: Number.NaN, width: 50, height: 20 }, 1, /box\.y must be a finite number/, {}],
  ];
  for (const [box, page, message, meta] of cases) {
    const e = await refused(one(box, page), 'invalid_request');
    assert.deepEqual(e.meta, { field: 'fields[0].box', ...meta }, JSON.stringify(box));
    assert.match(e.message, message);
  }
});

// ---- shape and order ----

test('field shapes are checked before the PDF is read, with meta.field', async () => {
  const junk = new TextEncoder().encode('not a pdf');
  const box = { x: 10, y: 10, width: 50, height: 20 };
  const cases: [unknown, string][] = [
    [[], 'fields'],
    [[{ type: 'text', anchor: 'x' }], 'fields[0].key'],
    [[{ key: 'k', type: 'radio', anchor: 'x' }], 'fields[0].type'],
    [[{ key: 'k', type: 'text' }], 'fields[0]'],
    [[{ key: 'k', type: 'text', anchor: 'x', page: 1, box }], 'fields[0]'],
    [[{ key: 'k', type: 'text', anchor: '' }], 'fields[0].anchor'],
    [[{ key: 'k', type: 'text', anchor: '   ' }], 'fields[0].anchor'],
    [[{ key: 'k', type: 'text', anchor: 'x'.repeat(101) }], 'fields[0].anchor'],
    [[{ key: 'k', type: 'text', page: 1 }], 'fields[0].box'],
    [[{ key: 'k', type: 'text', box }], 'fields[0].page'],
  ];
  for (const [fields, field] of cases)
    await refused(placeTemplate(junk, fields as TemplatePlacementField[]), 'invalid_request', { field });
  // 100 characters (code points) is the limit.
  const pdf = await makePdf({ text: [['é'.repeat(40)]] });
  const r = await placeTemplate(pdf, [anchored('k', 'é'.repeat(40))]);
  assert.equal(r.fields.length, 1);
});

test('problems against the PDF are reported for the first field in input order', async () => {
  const pdf = await makePdf({ text: [['{{a}}']] });
  await refused(
    placeTemplate(pdf, [boxed('off', 2, { x: 1, y: 1, width: 10, height: 10 }), anchored('missing', '{{b}}')]),
    'invalid_request',
    { field: 'fields[0].page' },
  );
  await refused(
    placeTemplate(pdf, [anchored('missing', '{{b}}'), boxed('off', 2, { x: 1, y: 1, width: 10, height: 10 })]),
    'no_anchors_found',
    { field: 'missing' },
  );
});

test('a damaged PDF is invalid_file when anchors must be read; a time-out is placement_failed', async () => {
  await refused(
    placeTemplate(new TextEncoder().encode('%PDF-1.4 nonsense'), [anchored('k', '{{a}}')]),
    'invalid_file',
    {
      reason: 'damaged',
    },
  );
  const big = await makePdf({
    pages: 300,
    text: Array.from({ length: 300 }, (_, i) => [`{{field_${i}}} and some more words on page ${i + 1}`]),
  });
  await placeTemplate(await makePdf({ text: [['{{a}}']] }), [anchored('k', '{{a}}')]); // workers warm
  await refused(placeTemplate(big, [anchored('k', '{{field_299}}')], { timeoutMs: 1 }), 'placement_failed');
  const r = await placeTemplate(
    big,
    Array.from({ length: 300 }, (_, i) => anchored(`k${i}`, `{{field_${i}}}`)),
  );
  assert.deepEqual(r.fields[299], { ...r.fields[299], key: 'k299', page: 300 });
});

// ---- stamping a checked checkbox ----

test('a text value "✓" (U+2713) stamps a visible check mark from the embedded DejaVu font', async () => {
  const pdf = await makePdf({ text: [['Agree [[agree]]']] });
  const placed = await placeTemplate(pdf, [anchored('agree', '[[agree]]')]);
  const f = placed.fields[0];
  const field = {
    id: 'f1',
    role: 'A',
    type: 'text' as const,
    page: f.page,
    x: f.x,
    y: f.y,
    width: f.width,
    height: f.height,
  };
  const out = await stampPdf(placed.pdf, [{ field, value: { kind: 'text', text: '✓' } }]);
  assert.equal(darkest(tmp.render(placed.pdf), f), 255, 'the field is empty before');
  assert.ok(darkest(tmp.render(out), f) < 100, 'a dark glyph is drawn in the field');
  assert.ok(tmp.pdfText(out).includes('✓'), 'extracted as U+2713');
  assert.match(tmp.poppler('pdffonts', out), /DejaVuSans/);
});

test('findTemplateMarkers: every distinct {{…}} marker, in page order, with its count and box', async () => {
  const pdf = await makePdf({
    text: [
      ['Client: {{client_name}}', 'Plan: {{plan}} and again {{plan}}'],
      ['Sign: {{signature:client}}', 'Not a marker: {single} {{}}'],
    ],
  });
  const r = await findTemplateMarkers(pdf);
  assert.equal(r.pageCount, 2);
  assert.ok(r.hasText, 'the fixture has text');
  assert.deepEqual(
    r.markers.map((m) => [m.text, m.page, m.count]),
    [
      ['{{client_name}}', 1, 1],
      ['{{plan}}', 1, 2],
      ['{{signature:client}}', 2, 1],
    ],
  );
  for (const m of r.markers) assert.ok(m.box.width > 0 && m.box.height > 0, `${m.text} has a box`);
});
