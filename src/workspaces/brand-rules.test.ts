// The accent colour and logo rules on bytes made in code: contrast as WCAG computes it, the backgrounds the pages
// really draw on, and each refusal of a logo with its reason; accepted logos come back without their metadata.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { PAGE_BACKGROUNDS, checkBrandColor, checkLogo, contrastRatio } from './brand-rules.js';
import { GIF, SVG, jpegMarkers, makeJpeg, makePng, pngChunkTypes, pngWithChunks, solidPng } from './testing/images.js';

const refusal = (r: ReturnType<typeof checkLogo>) => {
  assert.equal(r.ok, false, 'refused');
  return r as Extract<typeof r, { ok: false }>;
};

describe('accent colour', () => {
  test('contrast ratios as WCAG 2.x computes them', () => {
    assert.equal(contrastRatio('#000000', '#ffffff'), 21);
    assert.equal(contrastRatio('#ffffff', '#ffffff'), 1);
    assert.equal(contrastRatio('#777777', '#ffffff').toFixed(2), '4.48');
    assert.equal(contrastRatio('#2454d6', '#ffffff').toFixed(2), contrastRatio('#ffffff', '#2454d6').toFixed(2));
  });

  test('the listed backgrounds are the ones the stylesheets draw on', () => {
    const read = (p: string) => fs.readFileSync(new URL(p, import.meta.url), 'utf8');
    const signer = read('../signing/page/signer.css');
    const verify = read('../verification/assets/verify.css');
    const bg = /--bg:\s*(#[0-9a-f]{6})/i.exec(signer)?.[1];
    const surface = /--surface:\s*(#[0-9a-f]{3,6})/i.exec(signer)?.[1];
    const verifyBg = /body\s*\{[^}]*background:\s*(#[0-9a-f]{6})/i.exec(verify)?.[1];
    const six = (c: string | undefined) => (c?.length === 4 ? `#${[...c.slice(1)].map((x) => x + x).join('')}` : c);
    for (const c of [bg, six(surface), verifyBg]) assert.ok(PAGE_BACKGROUNDS.includes(c as never), `${c} is listed`);
  });

  test('normalizes, refuses a bad format and a low contrast with the measured ratio', () => {
    assert.deepEqual(checkBrandColor(' #1A3FA8 '), { ok: true, color: '#1a3fa8' });
    for (const bad of ['1a3fa8', '#1a3fa', '#1a3fa8ff', 'navy', '#ggg000', ''])
      assert.equal(checkBrandColor(bad).ok, false, bad);
    const format = checkBrandColor('navy');
    assert.ok(!format.ok && format.problem === 'format' && /#RRGGBB/.test(format.reason), 'a name is a format refusal');

    const yellow = checkBrandColor('#ffd700');
    assert.ok(!yellow.ok && yellow.problem === 'contrast', 'gold is too light');
    assert.match(yellow.reason, /#ffd700 has a contrast of 1\.\d\d:1 against .*at least 4\.5:1/);

    // #767676 passes on white (4.54) but not on the signer page's #eef0f4: the worst background decides.
    assert.ok(contrastRatio('#767676', '#ffffff') >= 4.5, '#767676 passes on white');
    const grey = checkBrandColor('#767676');
    assert.ok(!grey.ok && grey.problem === 'contrast', '#767676 is refused');
    assert.equal(grey.vars.against, '#eef0f4');
    assert.equal(grey.vars.ratio, (Math.floor(contrastRatio('#767676', '#eef0f4') * 100) / 100).toFixed(2));
    assert.match(grey.reason, /against the page background #eef0f4/);
    assert.equal(checkBrandColor('#0b3d2e').ok, true, 'a dark green passes');
  });
});

describe('logo', () => {
  test('a PNG comes back with its size, without tEXt and trailing bytes, keeping colour chunks', () => {
    const png = pngWithChunks(
      solidPng(120, 40),
      [
        ['tEXt', 'Comment\0<script>alert(1)</script>'],
        ['gAMA', Uint8Array.of(0, 0, 0xb1, 0x8f)],
        ['zTXt', 'x'],
      ],
      '<svg onload=alert(1)>',
    );
    assert.deepEqual(pngChunkTypes(png).slice(0, 5), ['IHDR', 'tEXt', 'gAMA', 'zTXt', 'IDAT']);
    const r = checkLogo(png);
    assert.ok(r.ok, 'the PNG is accepted');
    assert.equal(r.logo.type, 'image/png');
    assert.deepEqual([r.logo.width, r.logo.height], [120, 40]);
    assert.deepEqual(pngChunkTypes(r.logo.bytes), ['IHDR', 'gAMA', 'IDAT', 'IEND']);
    assert.ok(!Buffer.from(r.logo.bytes).includes('script'), 'no text left');
    assert.ok(!Buffer.from(r.logo.bytes).includes('svg'), 'nothing after IEND');
    assert.deepEqual(checkLogo(r.logo.bytes), r, 'cleaning is stable');
  });

  test('a JPEG comes back with its size, without EXIF and comments', () => {
    const jpeg = makeJpeg(300, 100, { exif: 'GPS 52.52N 13.40E', comment: 'secret comment' });
    assert.deepEqual(jpegMarkers(jpeg), [0xe0, 0xe1, 0xfe, 0xdb, 0xc0, 0xc4, 0xc4, 0xda]);
    const r = checkLogo(jpeg);
    assert.ok(r.ok, 'the JPEG is accepted');
    assert.equal(r.logo.type, 'image/jpeg');
    assert.deepEqual([r.logo.width, r.logo.height], [300, 100]);
    assert.deepEqual(jpegMarkers(r.logo.bytes), [0xe0, 0xdb, 0xc0, 0xc4, 0xc4, 0xda]);
    assert.ok(
      !Buffer.from(r.logo.bytes).includes('GPS') && !Buffer.from(r.logo.bytes).includes('secret'),
      'no EXIF or comment left',
    );
    assert.deepEqual(checkLogo(Buffer.concat([jpeg, Buffer.from('<html>')])), r, 'trailing bytes dropped');
  });

  test('SVG and GIF are refused: only PNG or JPEG', () => {
    const svg = refusal(checkLogo(SVG));
    assert.equal(svg.problem, 'type');
    assert.match(svg.reason, /SVG image; only PNG or JPEG/);
    const gif = refusal(checkLogo(GIF));
    assert.equal(gif.problem, 'type');
    assert.match(gif.reason, /GIF image; only PNG or JPEG/);
    assert.match(refusal(checkLogo(Buffer.from('hello'))).reason, /only PNG or JPEG/);
    assert.match(refusal(checkLogo(new Uint8Array(0))).reason, /only PNG or JPEG/);
  });

  test('a 2 MB file is refused by its size', () => {
    const big = pngWithChunks(solidPng(10, 10), [['zTXt', Buffer.alloc(2 * 1024 * 1024, 1)]]);
    const r = refusal(checkLogo(big));
    assert.equal(r.problem, 'size');
    assert.match(r.reason, /The logo is 2049 KB; at most 512 KB/);
  });

  test('a 4000 px wide image is refused by its dimensions, PNG or JPEG', () => {
    const png = refusal(checkLogo(makePng(4000, 2, () => [0, 0, 0, 255])));
    assert.equal(png.problem, 'dimensions');
    assert.match(png.reason, /4000×2 pixels; at most 1000×1000/);
    const jpeg = refusal(checkLogo(makeJpeg(4000, 8)));
    assert.equal(jpeg.problem, 'dimensions');
    assert.match(jpeg.reason, /4000×8 pixels/);
    // A header that claims a small size over more data is caught by the data's size.
    assert.match(refusal(checkLogo(makePng(20, 20, undefined, { width: 10, height: 10 }))).reason, /wrong size/);
  });

  test('damaged files are refused: truncated, bad CRC, no IEND, bad JPEG structure', () => {
    const png = solidPng(50, 50);
    const cut = refusal(checkLogo(png.subarray(0, png.length - 20)));
    assert.equal(cut.problem, 'damaged');
    assert.match(cut.reason, /damaged or incomplete/);
    const noEnd = refusal(checkLogo(png.subarray(0, png.length - 12)));
    assert.match(noEnd.reason, /ends before its IEND/);

    const bad = Buffer.from(png);
    bad[8 + 25 + 10] ^= 0xff; // a byte inside IDAT's data
    assert.match(refusal(checkLogo(bad)).reason, /IDAT chunk fails its CRC check/);

    // A correct CRC over data that does not inflate.
    const junk = Buffer.from(pngWithChunks(makePng(2, 2), []));
    const idatAt = 8 + 25;
    junk.fill(0x55, idatAt + 8, idatAt + 8 + junk.readUInt32BE(idatAt));
    junk.writeUInt32BE(
      crc32(junk.subarray(idatAt + 4, idatAt + 8 + junk.readUInt32BE(idatAt))),
      idatAt + 8 + junk.readUInt32BE(idatAt),
    );
    assert.match(refusal(checkLogo(junk)).reason, /does not decompress/);

    const unknownCritical = pngWithChunks(solidPng(2, 2), [['ZZZZ', 'x']]);
    assert.match(refusal(checkLogo(unknownCritical)).reason, /unknown critical chunk ZZZZ/);

    const jpeg = makeJpeg(16, 16);
    assert.match(refusal(checkLogo(jpeg.subarray(0, 30))).reason, /damaged or incomplete/);
    assert.match(refusal(checkLogo(jpeg.subarray(0, jpeg.length - 2))).reason, /cut short|ends before/);
    const noFrame = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
    assert.match(refusal(checkLogo(noFrame)).reason, /has no image/);
  });
});
