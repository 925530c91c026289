import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { crc32, deflateSync } from 'node:zlib';
import { ApiError } from '../../lib/errors.js';
import { closePdfWorkers } from './pool.js';
import { MAX_PNG_BYTES, MAX_PNG_SIDE } from '../../limits.js';
import { checkSignaturePng, type Stamp, stampPdf, type StampValue } from './stamp.js';
import { checkPngData } from './stamp.work.js';
import { makePdf, makePng } from './testing/fixtures.js';
import { darkest, pdfScratch, type PdfScratch } from './testing/tools.js';
import type { Box, Field } from './types.js';

let tmp: PdfScratch;
before(async () => {
  tmp = await pdfScratch('signet-stamp-');
});
after(async () => {
  await tmp.cleanup();
  await closePdfWorkers();
});

const qpdfCheck = (pdf: Uint8Array) => {
  tmp.qpdfCheck(pdf);
  const s = Buffer.from(pdf).toString('latin1');
  assert.doesNotMatch(s, /\/ObjStm/, 'saved without object streams');
  assert.match(s, /\nxref\n/);
};

let ids = 0;
const fieldAt = (box: Box, o: Partial<Field> = {}): Field => ({
  id: `f${++ids}`,
  role: 'A',
  type: 'signature',
  page: 1,
  ...box,
  ...o,
});
const stamp = (box: Box, value: StampValue, o: Partial<Field> = {}): Stamp => ({ field: fieldAt(box, o), value });

async function refusedPng(p: Promise<unknown> | (() => unknown), field = 'signature.png_base64'): Promise<ApiError> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
  assert.equal(err.code, 'invalid_request');
  assert.deepEqual(err.meta, { field });
  return err;
}

test('typed signatures in every script come out as text (pdftotext), in embedded fonts', async () => {
  const names = [
    'Zoë Ångström',
    'Łukasz Żółć',
    'Ελένη Παπαδοπούλου',
    'Дмитрий Шостакович',
    'Արամ Խաչատրյան',
    'გიორგი ბერიძე',
    'דוד כהן',
    'محمد علي',
    '王小明',
    '山田 太郎',
    '김민준',
    'प्रिया शर्मा',
  ];
  const pdf = await makePdf({ text: [['Contract']] });
  const out = await stampPdf(
    pdf,
    names.map((text, i) => stamp({ x: 72, y: 60 + i * 55, width: 300, height: 45 }, { kind: 'typed', text })),
  );
  // pdftotext wraps right-to-left lines in embedding marks; strip those.
  const text = tmp.pdfText(out).replace(/[\u202a-\u202e]/g, '');
  for (const name of names) assert.ok(text.includes(name), `"${name}" missing from:\n${text}`);
  const fonts = tmp.poppler('pdffonts', out);
  assert.match(fonts, /DejaVuSans-Oblique/);
  assert.doesNotMatch(
    fonts
      .split('\n')
      .filter((l) => /DejaVu/.test(l))
      .join('\n'),
    / no  +no /,
    'DejaVu faces are embedded',
  );
  qpdfCheck(out);
});

test('an Arabic name keeps its word order (one run, spaces included; regression for per-face space runs)', async () => {
  const out = await stampPdf(await makePdf(), [
    stamp({ x: 72, y: 100, width: 300, height: 50 }, { kind: 'typed', text: 'محمد علي' }),
  ]);
  assert.ok(
    tmp
      .pdfText(out)
      .replace(/[\u202a-\u202e]/g, '')
      .includes('محمد علي'),
    "tmp .pdfText(out) .replace(/[\\u202a-\\u202e]/g, '') .includes('محمد علي')",
  );
});

test('a character no font has is a visible □ in the stamp, extracted as itself; CJK names render as text', async () => {
  const out = await stampPdf(await makePdf(), [
    stamp({ x: 72, y: 100, width: 300, height: 50 }, { kind: 'typed', text: 'Li 李小龍' }),
    stamp({ x: 72, y: 200, width: 300, height: 50 }, { kind: 'typed', text: 'Tamil தமிழ்' }),
  ]);
  const text = tmp.pdfText(out);
  assert.match(text, /Li 李小龍/);
  assert.match(text, /Tamil தமிழ்/);
  assert.doesNotMatch(text, /\?/);
  const img = tmp.render(out);
  assert.ok(darkest(img, { x: 250, y: 205, width: 110, height: 40 }) < 150, 'the boxes are ink');
});

test('a long typed name is scaled to fit its box, never cut, in any script (rendered: no ink outside)', async () => {
  const names = ['Дмитрий Александрович Шостакович-Римский', 'देवनागरी क्षत्रिय प्रिया शर्मा', '王小明 Дмитрий Ünal'];
  const boxes = names.map((_, i) => ({ x: 100, y: 100 + i * 120, width: 140, height: 30 }));
  const pdf = await makePdf();
  const out = await stampPdf(
    pdf,
    names.map((text, i) => stamp(boxes[i], { kind: 'typed', text })),
  );
  const text = tmp.pdfText(out);
  for (const n of names) assert.ok(text.includes(n), `"${n}" in full: ${text}`);
  assert.doesNotMatch(text, /…/);
  const img = tmp.render(out);
  for (const box of boxes) {
    assert.ok(darkest(img, box) < 150, 'ink in the box');
    for (const outside of [
      { x: box.x - 30, y: box.y, width: 28, height: box.height },
      { x: box.x + box.width + 2, y: box.y, width: 28, height: box.height },
      { x: box.x, y: box.y - 20, width: box.width, height: 18 },
      { x: box.x, y: box.y + box.height + 2, width: box.width, height: 18 },
    ])
      assert.equal(darkest(img, outside), 255, `no ink outside ${JSON.stringify(outside)}`);
  }
});

test('a typed signature lands inside its box (rendered), also on a page rotated 90°', async () => {
  for (const rotate of [0, 90]) {
    const box = { x: 100, y: 200, width: 240, height: 60 };
    const pdf = await makePdf({ rotate });
    const img0 = tmp.render(pdf);
    assert.equal(darkest(img0, box), 255);
    const img = tmp.render(await stampPdf(pdf, [stamp(box, { kind: 'typed', text: 'Ana Lima' })]));
    assert.ok(darkest(img, box) < 150, `rotate ${rotate}: ink in the box`);
    for (const outside of [
      { x: box.x, y: box.y - 30, width: box.width, height: 28 },
      { x: box.x, y: box.y + box.height + 2, width: box.width, height: 28 },
      { x: box.x + box.width + 2, y: box.y, width: 40, height: box.height },
    ]) {
      assert.equal(darkest(img, outside), 255, `rotate ${rotate}: no ink outside the box ${JSON.stringify(outside)}`);
    }
  }
});

test('a drawn PNG is fitted into the box keeping its aspect ratio, centred', async () => {
  // 400 × 100 solid ink into a 200 × 100 box: drawn 200 × 50, leaving 25 pt blank above and below.
  const png = makePng(400, 100, () => [10, 10, 10, 255]);
  const box = { x: 100, y: 100, width: 200, height: 100 };
  const out = await stampPdf(await makePdf(), [stamp(box, { kind: 'drawn', png })]);
  const img = tmp.render(out);
  assert.ok(darkest(img, { x: 102, y: 128, width: 196, height: 44 }) < 40, 'ink in the middle band');
  assert.equal(darkest(img, { x: 100, y: 100, width: 200, height: 23 }), 255, 'blank above');
  assert.equal(darkest(img, { x: 100, y: 177, width: 200, height: 23 }), 255, 'blank below');
  // A tall image in the same box: 50 × 100 centred horizontally.
  const tall = tmp.render(
    await stampPdf(await makePdf(), [stamp(box, { kind: 'drawn', png: makePng(50, 100, () => [10, 10, 10, 255]) })]),
  );
  assert.ok(
    darkest(tall, { x: 178, y: 102, width: 44, height: 96 }) < 40,
    'darkest(tall, { x: 178, y: 102, width: 44, height: 96 }) < 40',
  );
  assert.equal(darkest(tall, { x: 100, y: 100, width: 73, height: 100 }), 255);
  assert.equal(darkest(tall, { x: 227, y: 100, width: 73, height: 100 }), 255);
  qpdfCheck(out);
});

test('date and text fields print their value; text too long at 5 pt wraps, then ends in an ellipsis', async () => {
  const long = 'A very long company name that cannot possibly fit into such a narrow field, Incorporated Worldwide';
  const out = await stampPdf(await makePdf(), [
    stamp({ x: 72, y: 100, width: 100, height: 20 }, { kind: 'date', text: '2024-06-01' }, { type: 'date' }),
    stamp({ x: 72, y: 150, width: 150, height: 20 }, { kind: 'text', text: 'ACME Ltd.' }, { type: 'text' }),
    stamp({ x: 72, y: 200, width: 60, height: 12 }, { kind: 'text', text: long }, { type: 'text' }),
    stamp({ x: 300, y: 200, width: 200, height: 40 }, { kind: 'text', text: long }, { type: 'text' }),
  ]);
  const text = tmp.pdfText(out, { raw: true });
  assert.match(text, /2024-06-01/);
  assert.match(text, /ACME Ltd\./);
  // The tall box holds the whole value on several 5 pt lines; the small one shows two lines and an ellipsis, and
  // its text (ActualText) still holds every character.
  assert.doesNotMatch(text, /…/, 'the ellipsis is drawn, the extracted text is the value');
  const squashed = text.replace(/\s+/g, ' ');
  assert.equal(squashed.split(long).length - 1, 2, `both values in full: ${squashed}`);
  assert.ok(darkest(tmp.render(out), { x: 72, y: 200, width: 60, height: 12 }) < 150, 'the cut value is drawn');
  qpdfCheck(out);
});

test('a ticked checkbox is a check mark inside its box, extractable as ✓', async () => {
  const out = await stampPdf(await makePdf(), [
    stamp({ x: 72, y: 100, width: 20, height: 20 }, { kind: 'check' }, { type: 'checkbox' }),
  ]);
  assert.equal(tmp.pdfText(out).trim(), '✓');
  qpdfCheck(out);
});

test('stamps go on the right page of a multi-page PDF, and object-stream input is saved with a classic xref', async () => {
  const pdf = await makePdf({ pages: 3, objectStreams: true });
  const out = await stampPdf(pdf, [
    stamp({ x: 72, y: 100, width: 200, height: 40 }, { kind: 'typed', text: 'Page Three' }, { page: 3 }),
  ]);
  const pages = tmp.pdfText(out).split('\f');
  assert.doesNotMatch(pages[0] + pages[1], /Page Three/);
  assert.match(pages[2], /Page Three/);
  qpdfCheck(out);
});

test('an empty or invisible-only typed signature is invalid_request on signature.text', async () => {
  const pdf = await makePdf();
  for (const text of ['', '   ', '\u200b\u200e']) {
    await refusedPng(
      stampPdf(pdf, [stamp({ x: 72, y: 100, width: 200, height: 40 }, { kind: 'typed', text })]),
      'signature.text',
    );
  }
});

test('checkSignaturePng: accepts a real PNG and returns its size', () => {
  assert.deepEqual(checkSignaturePng(makePng(30, 20)), { width: 30, height: 20 });
  assert.deepEqual(checkSignaturePng(makePng(MAX_PNG_SIDE, 1)), { width: MAX_PNG_SIDE, height: 1 });
});

test('checkSignaturePng refusals: not a PNG, too short, too big, over 4000 px, no pixels, IHDR not first', async () => {
  await refusedPng(() => checkSignaturePng(new TextEncoder().encode('GIF89a' + 'x'.repeat(100))));
  await refusedPng(() => checkSignaturePng(makePng(2, 2).subarray(0, 30)));
  await refusedPng(() => checkSignaturePng('not bytes' as unknown as Uint8Array));
  const padded = new Uint8Array(MAX_PNG_BYTES + 1);
  padded.set(makePng(10, 10));
  const tooBig = await refusedPng(() => checkSignaturePng(padded));
  assert.match(tooBig.message, /bytes/);
  const wide = await refusedPng(() =>
    checkSignaturePng(makePng(10, 10, undefined, { width: MAX_PNG_SIDE + 1, height: 10 })),
  );
  assert.match(wide.message, /pixels/);
  await refusedPng(() => checkSignaturePng(makePng(10, 10, undefined, { width: 10, height: MAX_PNG_SIDE + 1 })));
  await refusedPng(() => checkSignaturePng(makePng(10, 10, undefined, { width: 0, height: 10 })));
  const swapped = makePng(10, 10);
  swapped.set(new TextEncoder().encode('IHDX'), 12);
  await refusedPng(() => checkSignaturePng(swapped));
});

test('a PNG whose IHDR lies about its size is refused when stamping (before: embedded as a 3000 × 3000 garbage image)', async () => {
  const liar = makePng(10, 10, undefined, { width: 3000, height: 3000 });
  assert.doesNotThrow(() => checkSignaturePng(liar), 'the header alone looks fine');
  await refusedPng(() => checkPngData(liar));
  const err = await refusedPng(
    stampPdf(await makePdf(), [stamp({ x: 72, y: 100, width: 200, height: 50 }, { kind: 'drawn', png: liar })]),
  );
  assert.match(err.message, /less image data/);
  // Damaged image data (not a zlib stream) is refused as undecodable.
  const broken = makePng(20, 20);
  broken.fill(0x55, 41, 60);
  await refusedPng(() => checkPngData(broken));
  // Honest PNGs pass.
  assert.doesNotThrow(() => checkPngData(makePng(123, 45)));
});

/** An Adam7-interlaced 8-bit grey PNG, built by hand (makePng writes non-interlaced RGBA only). */
function interlacedGreyPng(w: number, h: number): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // depth
  ihdr[9] = 0; // grey
  ihdr[12] = 1; // Adam7
  const rows: number[] = [];
  // The Adam7 passes written out here rather than taken from lib/png.ts: the image must not share the reader's table.
  for (const [x0, y0, dx, dy] of [
    [0, 0, 8, 8],
    [4, 0, 8, 8],
    [0, 4, 4, 8],
    [2, 0, 4, 4],
    [0, 2, 2, 4],
    [1, 0, 2, 2],
    [0, 1, 1, 2],
  ]) {
    for (let y = y0; y < h; y += dy) {
      if (x0 >= w) break;
      rows.push(0);
      for (let x = x0; x < w; x += dx) rows.push((x * 7 + y * 3) & 0xff);
    }
  }
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(
    Buffer.concat([
      sig,
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(Buffer.from(rows))),
      chunk('IEND', Buffer.alloc(0)),
    ]),
  );
}

test('checkPngData sizes interlaced images by their seven passes', async () => {
  for (const [w, h] of [
    [1, 1],
    [3, 2],
    [9, 9],
    [37, 23],
  ])
    assert.doesNotThrow(() => checkPngData(interlacedGreyPng(w, h)), `${w}×${h}`);
  const liar = interlacedGreyPng(37, 23);
  new DataView(liar.buffer).setUint32(20, 40); // declares 40 rows
  await refusedPng(() => checkPngData(liar));
  const out = await stampPdf(await makePdf(), [
    stamp({ x: 72, y: 100, width: 100, height: 60 }, { kind: 'drawn', png: interlacedGreyPng(37, 23) }),
  ]);
  qpdfCheck(out);
});

test('refusals of a drawn PNG happen on the calling thread before any PDF work', async () => {
  const t0 = performance.now();
  await refusedPng(
    stampPdf(new Uint8Array(0), [
      stamp({ x: 0, y: 0, width: 10, height: 10 }, { kind: 'drawn', png: new Uint8Array(50) }),
    ]),
  );
  assert.ok(performance.now() - t0 < 500, 'performance.now() - t0 < 500');
});
