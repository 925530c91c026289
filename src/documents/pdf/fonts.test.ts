// fonts.ts and faces.ts checked with poppler: what pdftotext extracts (default and -raw modes), where pdftotext
// -bbox finds the words (visual order), what pdffonts reports, and how pdftoppm renders. The rendered pages are
// kept in $TMPDIR/signet-fonts-test/ to be looked at.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cachedFontkit, face } from './faces.js';
import { Fonts, type FontStyle, codePointList } from './fonts.js';
import { inflateSync } from 'node:zlib';
import fontkit from '@pdf-lib/fontkit';
import { PDFDict, PDFDocument, PDFName, PDFRawStream, rgb } from './pdf-lib.js';
import { darkest, pdfScratch, type PdfScratch } from './testing/tools.js';

let tmp: PdfScratch;
const shots = path.join(tmpdir(), 'signet-fonts-test');
before(async () => {
  tmp = await pdfScratch('signet-fonts-');
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
});
after(() => tmp.cleanup());

/** The strings, one script (or a mix) each. */
export const SCRIPT_SAMPLES = [
  'Zoë Ångström',
  'Ελένη Παπαδοπούλου',
  'Дмитрий Шостакович',
  '王小明 Дмитрий Ünal',
  'Договор 合同 agreement',
  '中文',
  '日本語かな',
  '山田 太郎',
  '한국어',
  '김민준',
  'العربية',
  'محمد علي',
  'عبد الله',
  'עברית',
  'שרה כהן',
  'देवनागरी',
  'प्रिया शर्मा',
  'देवनागरी क्षत्रिय',
];

/** pdftotext wraps right-to-left runs in embedding marks; they are not part of the text. */
const unmark = (s: string) => s.replace(/[\u202a-\u202e]/g, '');

/** A Letter page with each line drawn at 12 pt in `styles`, one row per line. */
async function sheet(lines: string[], styles: FontStyle[] = ['regular']): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const fonts = new Fonts(doc);
  const page = doc.addPage([612, 792]);
  for (const [i, line] of lines.entries()) {
    for (const [j, style] of styles.entries())
      await fonts.draw(page, line, { x: 20 + j * 196, y: 750 - i * 30, size: 12, style, color: rgb(0, 0, 0) });
  }
  return doc.save({ useObjectStreams: false });
}

/** Words with their left edge, from pdftotext -bbox. */
function words(pdf: Uint8Array): { x: number; text: string }[] {
  const html = execFileSync('pdftotext', ['-bbox', tmp.save(pdf), '-'], { encoding: 'utf8' });
  return [...html.matchAll(/<word xMin="([\d.]+)"[^>]*>([^<]*)<\/word>/g)].map((m) => ({ x: +m[1], text: m[2] }));
}

function keep(pdf: Uint8Array, name: string): string {
  const file = path.join(shots, name);
  execFileSync('pdftoppm', ['-r', '110', '-png', '-singlefile', tmp.save(pdf), file]);
  return `${file}.png`;
}

test('each face is parsed once per worker; pdf-lib reuses the parsed font; subsetting a CJK face is quick', async (t) => {
  let t0 = performance.now();
  const sc = face('sc');
  const parseMs = performance.now() - t0;
  assert.equal(face('sc'), sc);
  assert.equal(cachedFontkit.create(sc.bytes), sc.font, 'pdf-lib gets the parsed font');
  const embeds: number[] = [];
  for (let i = 0; i < 3; i++) {
    t0 = performance.now();
    const pdf = await sheet(['王小明 合同 中文 山田']);
    embeds.push(performance.now() - t0);
    assert.ok(pdf.byteLength < 60_000, `a CJK subset, not the 10 MB face: ${pdf.byteLength} bytes`);
  }
  t.diagnostic(
    `first parse of Noto Sans SC: ${parseMs.toFixed(0)} ms (0 if already parsed); sheet with a subset: ${embeds.map((m) => m.toFixed(0)).join(', ')} ms`,
  );
});

test('every script of issue 22 is drawn from an embedded subset and extracted exactly, default and -raw', async (t) => {
  const pdf = await sheet(SCRIPT_SAMPLES, ['regular', 'bold', 'script']);
  t.diagnostic(`rendered: ${keep(pdf, 'scripts')}`);
  for (const raw of [false, true]) {
    const lines = unmark(tmp.pdfText(pdf, { raw }))
      .split('\n')
      .map((l) => l.trim());
    for (const s of SCRIPT_SAMPLES) {
      const n = lines.filter((l) => l === s || l === `${s} ${s} ${s}`).length;
      assert.ok(n > 0, `${raw ? '-raw' : 'default'}: "${s}" not extracted exactly; got:\n${lines.join('\n')}`);
    }
    assert.doesNotMatch(lines.join('\n'), /[?□]/, 'no question mark or box');
  }
  const fonts = tmp.poppler('pdffonts', pdf);
  for (const name of ['DejaVuSans-Bold', 'NotoSansSC', 'NotoSansJP', 'NotoSansKR', 'NotoSansArabic', 'NotoSansHebrew'])
    assert.match(fonts, new RegExp(name), `${name} in:\n${fonts}`);
  for (const row of fonts.split('\n').slice(2).filter(Boolean))
    assert.match(row, /CID TrueType\s+Identity-H\s+yes\s+\w+\s+yes/, `embedded, with a ToUnicode map: ${row}`);
  // Subsets: every face of the sheet, CJK included, in well under a megabyte.
  assert.ok(pdf.byteLength < 400_000, `${pdf.byteLength} bytes`);
});

test('a mixed line is ordered visually by the bidi algorithm: left to right Договор, عقد, 合同', async () => {
  const pdf = await sheet(['Договор عقد 合同', 'محمد 123 علي']);
  const w = words(pdf);
  // -bbox gives each word's characters in visual order: right-to-left words come reversed.
  const rev = (s: string) => [...s].reverse().join('');
  const x = (s: string) => w.find((v) => v.text.includes(s) || v.text.includes(rev(s)))?.x ?? NaN;
  assert.ok(x('Договор') < x('عقد') && x('عقد') < x('合同'), JSON.stringify(w));
  // A right-to-left line: its first word is on the right.
  assert.ok(x('علي') < x('123') && x('123') <= x('محمد'), JSON.stringify(w));
  // -raw reads the content in drawing order, each right-to-left run given in visual order (ActualText) for poppler
  // to turn around: exact.
  assert.match(unmark(tmp.pdfText(pdf, { raw: true })), /^Договор عقد 合同$/m);
  // Default mode reorders lines with its own simple rule: a page (here, the second line alone) where right-to-left
  // characters outnumber left-to-right ones is read right to left as a whole, and a space that follows a
  // right-to-left run is moved in front of it (it never outputs a space between a right-to-left run and the
  // left-to-right text after it). On a left-to-right page the words come out intact and in reading order.
  assert.match(unmark(tmp.pdfText(await sheet(['Договор عقد 合同']))), /Договор\s+عقد\s*合同/);
});

test('a character no face has is drawn as a visible □, named by missing(), and extracted as itself', async () => {
  const text = 'Tamil தமிழ் ok';
  const doc = await PDFDocument.create();
  const fonts = new Fonts(doc);
  const missing = fonts.missing(text);
  assert.equal(codePointList(missing), 'U+0BA4 U+0BAE U+0BBF U+0BB4 U+0BCD');
  assert.deepEqual(fonts.missing('王小明 Дмитрий محمد प्रिया'), []);
  const page = doc.addPage([300, 100]);
  await fonts.draw(page, text, { x: 10, y: 50, size: 20 });
  const pdf = await doc.save();
  keep(pdf, 'fallback');
  const extracted = tmp.pdfText(pdf);
  assert.ok(extracted.includes(text), extracted);
  assert.doesNotMatch(extracted, /\?/);
  // The boxes are ink: the stretch after "Tamil " is not blank.
  const img = tmp.render(pdf);
  const after = (await fonts.width('Tamil ', 'regular', 20)) + 10;
  const boxes = await fonts.width('□□□□□', 'regular', 20);
  assert.ok(darkest(img, { x: after, y: 32, width: boxes, height: 22 }) < 100, 'the boxes are drawn');
});

test('Devanagari is shaped (conjuncts, reordered matras) and Arabic joined: fewer glyphs than characters', async () => {
  type Layout = { layout(s: string): { glyphs: { id: number }[] }; glyphForCodePoint(cp: number): { id: number } };
  const deva = face('deva').font as unknown as Layout;
  // क्ष is one conjunct glyph; in "रि" the i-matra is drawn first.
  assert.equal(deva.layout('क्ष').glyphs.length, 1);
  const ri = deva.layout('रि').glyphs.map((g) => g.id);
  // (The font picks one of several i-matra glyphs by the width of what it spans.)
  assert.equal(ri.length, 2);
  assert.equal(ri[1], deva.glyphForCodePoint(0x0930).id, 'the consonant comes second, after the i-matra');
  const arabic = face('arabic').font as unknown as Layout;
  const isolated = [...'محمد'].map((c) => arabic.layout(c).glyphs[0].id);
  const joined = arabic.layout('محمد').glyphs.map((g) => g.id);
  assert.notDeepEqual([...joined].reverse(), isolated, 'joining forms differ from isolated ones');
});

test("the same glyph keeps its text across documents (a composite's part is not cached without its character)", async () => {
  // "Ê" is drawn from "E" and a circumflex: subsetting the first document asks for "E" without a character.
  await sheet(['Ê Ü'], ['bold']);
  const text = tmp.pdfText(await sheet(['Events Under'], ['bold']));
  assert.match(text, /Events Under/);
});

/** The embedded TrueType subsets (FontFile2), uncompressed, in object order. */
async function fontFiles(pdf: Uint8Array): Promise<Buffer[]> {
  const doc = await PDFDocument.load(pdf);
  const out: Buffer[] = [];
  for (const [, obj] of doc.context.enumerateIndirectObjects()) {
    if (!(obj instanceof PDFDict) || !obj.has(PDFName.of('FontFile2'))) continue;
    const stream = doc.context.lookup(obj.get(PDFName.of('FontFile2'))) as PDFRawStream;
    out.push(inflateSync(stream.contents));
  }
  return out;
}

test('a subset is encoded once per set of glyphs: the same text gives the same font file, more text a larger one', async () => {
  const first = await fontFiles(await sheet(['Kept subset']));
  const again = await fontFiles(await sheet(['Kept subset']));
  const morePdf = await sheet(['Kept subset, and more: xyzQW']);
  const more = await fontFiles(morePdf);
  assert.equal(first.length, 1);
  assert.deepEqual(again, first);
  const glyphs = (b: Buffer) => (fontkit.create(b) as unknown as { numGlyphs: number }).numGlyphs;
  assert.ok(glyphs(more[0]) > glyphs(first[0]), `${glyphs(more[0])} glyphs, not ${glyphs(first[0])}`);
  assert.match(tmp.pdfText(morePdf), /Kept subset, and more: xyzQW/);
});

test('wrap keeps marks with their base and breaks CJK runs between characters', async () => {
  const doc = await PDFDocument.create();
  const fonts = new Fonts(doc);
  const lines = await fonts.wrap('प्रियाप्रियाप्रियाप्रिया', 'regular', 12, 40);
  assert.ok(lines.length > 1, 'wrapped');
  for (const l of lines) assert.doesNotMatch(l, /^\p{M}/u, `a line starts with a mark: ${l}`);
  assert.equal(lines.join(''), 'प्रियाप्रियाप्रियाप्रिया');
  const cjk = await fonts.wrap('王小明王小明王小明王小明', 'regular', 12, 40);
  assert.ok(cjk.length >= 3, cjk.join('|'));
  assert.equal(cjk.join(''), '王小明王小明王小明王小明');
});
