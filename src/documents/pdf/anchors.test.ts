import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument, type PDFFont, StandardFonts } from 'pdf-lib';
import { ApiError } from '../../lib/errors.js';
import { anchorProblems, findAnchors, previewPlacement, scanAnchors, validateAnchors } from './anchors.js';
import { joinLines } from './anchors.work.js';
import { closePdfWorkers } from './pool.js';
import { makeGarbage, makePdf } from './testing/fixtures.js';
import type { Anchor, Box } from './types.js';

after(() => closePdfWorkers());

// The fixture draws 12 pt Helvetica (pieces of a split line alternate with Helvetica-Bold), lines from
// (72, pageHeight - 72) down 24 pt apart. anchors.ts boxes run from 0.25 size below the baseline to 0.95 above.
let regular: PDFFont;
let bold: PDFFont;
before(async () => {
  const doc = await PDFDocument.create();
  regular = await doc.embedFont(StandardFonts.Helvetica);
  bold = await doc.embedFont(StandardFonts.HelveticaBold);
});

const TOL = 3;
const textWidth = (text: string, size = 12, split: number[] = []) => {
  const cuts = [0, ...split, text.length];
  let w = 0;
  for (let k = 0; k + 1 < cuts.length; k++)
    w += (k % 2 ? bold : regular).widthOfTextAtSize(text.slice(cuts[k], cuts[k + 1]), size);
  return w;
};

/** Where the fixture put a horizontal line, as a top-left box: x, baseline from the top, width, size. */
const expectedBox = (x: number, baselineFromTop: number, width: number, size = 12): Box => ({
  x,
  y: baselineFromTop - 0.95 * size,
  width,
  height: 1.2 * size,
});

function assertBoxNear(actual: Box, expected: Box, what: string, tol = TOL): void {
  for (const k of ['x', 'y', 'width', 'height'] as const) {
    assert.ok(
      Math.abs(actual[k] - expected[k]) <= tol,
      `${what}: ${k} is ${actual[k]}, expected ${expected[k].toFixed(2)} ± ${tol}`,
    );
  }
}

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

test('each marker type is found on its page, in reading order, with a top-left box where the fixture drew it', async () => {
  const markers = ['{{signature:Buyer}}', '{{initials:Buyer}}', '{{date:Seller}}', '{{text:Seller}}'];
  const pdf = await makePdf({
    text: [['Contract heading', markers[0], markers[1]], [], [markers[2], 'filler', markers[3]]],
  });
  const scan = await scanAnchors(pdf);
  assert.equal(scan.pageCount, 3);
  assert.equal(scan.hasText, true);
  assert.deepEqual(
    scan.anchors.map((a) => [a.type, a.role, a.page]),
    [
      ['signature', 'Buyer', 1],
      ['initials', 'Buyer', 1],
      ['date', 'Seller', 3],
      ['text', 'Seller', 3],
    ],
  );
  // Line n of a page has its baseline 72 + 24n from the top.
  const lineOf = [1, 2, 0, 2];
  scan.anchors.forEach((a, i) =>
    assertBoxNear(a.box, expectedBox(72, 72 + 24 * lineOf[i], textWidth(markers[i])), markers[i]),
  );
});

test('boxes follow the size and position of the text (explicit x/y, 20 pt)', async () => {
  const pdf = await makePdf({ text: [[{ text: '{{signature:A}}', x: 300, y: 100, size: 20 }]] });
  const [a] = await findAnchors(pdf);
  assert.equal(a.page, 1);
  assertBoxNear(a.box, expectedBox(300, 792 - 100, textWidth('{{signature:A}}', 20), 20), 'big marker');
});

test('a marker split over several text items (different fonts) is joined and boxed over all pieces', async () => {
  const text = '{{signature:Buyer}}';
  const split = [2, 7, 12, 17];
  const pdf = await makePdf({ text: [[{ text, split }]] });
  const anchors = await findAnchors(pdf);
  assert.equal(anchors.length, 1);
  assert.equal(anchors[0].role, 'Buyer');
  assertBoxNear(anchors[0].box, expectedBox(72, 72, textWidth(text, 12, split)), 'split marker');
});

test('white (invisible) markers are still found', async () => {
  const anchors = await findAnchors(await makePdf({ text: [[{ text: '{{signature:A}}', white: true }]] }));
  assert.equal(anchors.length, 1);
});

test('a marker inside a longer text item is found; its box is proportional (inside the item, on its line)', async () => {
  const line = 'Please sign here: {{signature:Client}} and date it.';
  const [a] = await findAnchors(await makePdf({ text: [[line]] }));
  assert.equal(a.role, 'Client');
  const full = textWidth(line);
  assert.ok(a.box.x > 72 + 20 && a.box.x + a.box.width < 72 + full - 20, JSON.stringify(a.box));
  assertBoxNear({ ...a.box, x: 0, width: 0 }, { ...expectedBox(72, 72, 0), x: 0, width: 0 }, 'vertical extent');
  assert.ok(Math.abs(a.box.width - textWidth('{{signature:Client}}')) < 15, `width ${a.box.width}`);
});

test('on a page rotated 90° the box is on the page as shown (width and height swap, text runs down)', async () => {
  // Page 612 × 792 with /Rotate 90 shows as 792 × 612. A user-space point (ux, uy) shows at (uy, ux) from the
  // top-left, and the text's "up" points right, so the box is 1.2 size wide and as tall as the text is long.
  const marker = '{{signature:Signer}}';
  const pdf = await makePdf({ rotate: 90, text: [[{ text: marker, x: 100, y: 500 }]] });
  const [a] = await findAnchors(pdf);
  assert.equal(a.page, 1);
  assertBoxNear(a.box, { x: 500 - 0.25 * 12, y: 100, width: 1.2 * 12, height: textWidth(marker) }, 'rotated marker');
});

test('a CropBox moves the origin to the visible corner', async () => {
  const pdf = await makePdf({ cropBox: [50, 60, 400, 500], text: [[{ text: '{{date:A}}', x: 100, y: 400 }]] });
  const [a] = await findAnchors(pdf);
  // Visible area: x 50..450, y 60..560 in user space; the baseline at y 400 is 160 from the top.
  assertBoxNear(a.box, expectedBox(50, 160, textWidth('{{date:A}}')), 'cropped page');
});

test('spaces inside the braces are tolerated; look-alikes are ignored', async () => {
  const lines = [
    '{{ signature : Buyer }}', // found
    '{{Signature:Buyer}}', // the type is lower-case only
    '{{signature:Bu yer}}', // no spaces inside a role
    '{{signature:}}', // empty role
    '{signature:Buyer}', // single braces
    '{{stamp:Buyer}}', // unknown type
    `{{text:${'r'.repeat(65)}}}`, // role over 64 characters
    `{{text:${'R'.repeat(64)}}}`, // 64 is fine
    '{{initials:a_b-9}}', // _ - and digits are fine
  ];
  // 8 pt so the 64-character role fits on the page (pdf.js drops glyphs past the page edge).
  const anchors = await findAnchors(await makePdf({ text: [lines.map((text) => ({ text, size: 8 }))] }));
  assert.deepEqual(
    anchors.map((a) => `${a.type}:${a.role}`),
    ['signature:Buyer', `text:${'R'.repeat(64)}`, 'initials:a_b-9'],
  );
});

test('two pieces far apart on one baseline (two columns) do not form a marker; a normal word gap does', async () => {
  // pdf.js reports the gap as one wide " " item; that used to join the columns into "{{signature: A}}".
  const pdf = await makePdf({
    text: [
      [
        { text: '{{signature:', x: 72, y: 700 },
        { text: 'A}}', x: 400, y: 700 },
      ],
    ],
  });
  assert.deepEqual(await findAnchors(pdf), []);
  const near = await makePdf({
    text: [
      [
        { text: '{{signature:', x: 72, y: 700 },
        { text: 'A}}', x: 72 + textWidth('{{signature:') + 4, y: 700 },
      ],
    ],
  });
  assert.deepEqual(
    (await findAnchors(near)).map((a) => a.role),
    ['A'],
  );
});

test('joinLines: a wide whitespace item is a column break, a narrow one is kept', () => {
  const item = (str: string, x: number, width: number) => ({
    str,
    transform: [12, 0, 0, 12, x, 700],
    width,
    height: 12,
    hasEOL: false,
  });
  assert.deepEqual(
    joinLines([item('a', 72, 6), item(' ', 78, 200), item('b', 278, 6)]).map((l) => l.text),
    ['a\u0000b'],
  );
  assert.deepEqual(
    joinLines([item('a', 72, 6), item(' ', 78, 4), item('b', 82, 6)]).map((l) => l.text),
    ['a b'],
  );
});

test('joinLines: items on one baseline join, a new baseline starts a new line, hasEOL ends one', () => {
  const item = (str: string, x: number, y: number, hasEOL = false) => ({
    str,
    transform: [12, 0, 0, 12, x, y],
    width: str.length * 6,
    height: 12,
    hasEOL,
  });
  const lines = joinLines([
    item('{{sig', 72, 700),
    item('nature:A}}', 102, 700),
    item('next', 72, 676),
    item('x', 96, 676, true),
    item('y', 102, 676),
  ]);
  assert.deepEqual(
    lines.map((l) => l.text),
    ['{{signature:A}}', 'nextx', 'y'],
  );
});

test('a PDF without text scans to hasText false; a garbage file is invalid_file', async () => {
  const scan = await scanAnchors(await makePdf({ pages: 2 }));
  assert.deepEqual(scan, { anchors: [], hasText: false, pageCount: 2 });
  await assert.rejects(
    scanAnchors(makeGarbage(2048)),
    (e: unknown) => e instanceof ApiError && e.code === 'invalid_file',
  );
});

// ---- problems ----

const A = (type: Anchor['type'], role: string, page = 1): Anchor => ({
  type,
  role,
  page,
  box: { x: 72, y: 72, width: 100, height: 14 },
});

test('anchorProblems: no_anchors_found alone, with meta.reason only when hasText is known', () => {
  assert.deepEqual(
    anchorProblems([], ['Buyer']).map((p) => [p.code, p.meta]),
    [['no_anchors_found', undefined]],
  );
  assert.deepEqual(anchorProblems([], ['Buyer'], { hasText: false })[0].meta, { reason: 'no_text' });
  assert.deepEqual(anchorProblems([], ['Buyer'], { hasText: true })[0].meta, { reason: 'no_markers' });
  assert.equal(anchorProblems([], undefined, { hasText: true }).length, 1);
});

test('anchorProblems: unknown_role (once per role), duplicate_anchor, signer_has_no_anchor, in that order', () => {
  const anchors = [
    A('signature', 'Buyer'),
    A('signature', 'Buyer'), // duplicate on page 1
    A('signature', 'Buyer', 2), // same marker on another page is fine
    A('date', 'Ghost'),
    A('text', 'Ghost', 3),
    A('initials', 'Seller'), // Seller has markers but no signature marker
  ];
  const problems = anchorProblems(anchors, ['Buyer', 'Seller', 'Witness']);
  assert.deepEqual(
    problems.map((p) => [p.code, p.meta]),
    [
      ['unknown_role', { role: 'Ghost' }],
      ['duplicate_anchor', { role: 'Buyer', page: 1, type: 'signature' }],
      ['signer_has_no_anchor', { role: 'Seller' }],
      ['signer_has_no_anchor', { role: 'Witness' }],
    ],
  );
  for (const p of problems) assert.ok(p.message.length > 0, 'p.message.length > 0');
});

test('anchorProblems: a duplicate is reported once however many copies; without roles only duplicates are checked', () => {
  const anchors = [A('date', 'X'), A('date', 'X'), A('date', 'X'), A('signature', 'Y')];
  assert.deepEqual(
    anchorProblems(anchors).map((p) => p.code),
    ['duplicate_anchor'],
  );
  assert.deepEqual(anchorProblems([A('signature', 'A'), A('signature', 'B')], ['A', 'B']), []);
});

test('roles are case-sensitive: "buyer" markers do not satisfy a "Buyer" signer (unknown_role, then signer_has_no_anchor)', async () => {
  const anchors = await findAnchors(await makePdf({ text: [['{{signature:buyer}}']] }));
  assert.deepEqual(
    anchorProblems(anchors, ['Buyer']).map((p) => [p.code, p.meta]),
    [
      ['unknown_role', { role: 'buyer' }],
      ['signer_has_no_anchor', { role: 'Buyer' }],
    ],
  );
  assert.deepEqual(anchorProblems(anchors, ['buyer']), []);
});

test('validateAnchors throws the first problem as its ApiError (code, status 400, meta); passes silently otherwise', () => {
  assertApiError(() => validateAnchors([], ['A'], { hasText: false }), 'no_anchors_found', { reason: 'no_text' });
  assertApiError(() => validateAnchors([A('signature', 'A'), A('signature', 'Z')], ['A']), 'unknown_role', {
    role: 'Z',
  });
  assertApiError(() => validateAnchors([A('signature', 'A'), A('signature', 'A')], ['A']), 'duplicate_anchor', {
    role: 'A',
    page: 1,
    type: 'signature',
  });
  const err = assertApiError(() => validateAnchors([A('signature', 'A')], ['A', 'B']), 'signer_has_no_anchor', {
    role: 'B',
  });
  assert.equal(err.status, 400);
  assert.doesNotThrow(() => validateAnchors([A('signature', 'A'), A('date', 'A')], ['A']));
});

test('previewPlacement returns every anchor and every problem', async () => {
  const pdf = await makePdf({ text: [['{{signature:A}}', '{{signature:A}}', '{{date:C}}']] });
  const r = await previewPlacement(pdf, ['A', 'B']);
  assert.equal(r.anchors.length, 3);
  assert.deepEqual(
    r.problems.map((p) => p.code),
    ['unknown_role', 'duplicate_anchor', 'signer_has_no_anchor'],
  );
  const none = await previewPlacement(await makePdf({ text: [['no markers here']] }));
  assert.deepEqual(
    none.problems.map((p) => [p.code, p.meta]),
    [['no_anchors_found', { reason: 'no_markers' }]],
  );
});

test('100 pages of markers: every anchor found on its page (time logged)', async () => {
  const text = Array.from({ length: 100 }, (_, i) => [
    `Page ${i + 1} body text`,
    `{{signature:R${i % 3}}}`,
    `{{date:R${i % 3}}}`,
  ]);
  const pdf = await makePdf({ text });
  await findAnchors(await makePdf({ text: [['warm']] }));
  const t0 = performance.now();
  const anchors = await findAnchors(pdf);
  const ms = performance.now() - t0;
  console.log(`# anchors on 100 pages (${anchors.length} markers) in ${ms.toFixed(0)} ms`);
  assert.equal(anchors.length, 200);
  anchors.forEach((a, i) => assert.equal(a.page, Math.floor(i / 2) + 1));
  assert.deepEqual(anchorProblems(anchors, ['R0', 'R1', 'R2']), []);
});
