import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  deferredScript,
  dirAttr,
  esc,
  htmlHead,
  jsonBlock,
  jsonForHtml,
  localeFromAcceptLanguage,
  modulePreload,
  moduleScript,
  renderTooManyRequestsPage,
  resultPage,
} from './html.js';

describe('web/html', () => {
  test('esc escapes text and both quotes; jsonForHtml cannot close its element or start a comment', () => {
    assert.equal(esc(`<a href="x" title='y'>&</a>`), '&#60;a href=&#34;x&#34; title=&#39;y&#39;&#62;&#38;&#60;/a&#62;');
    assert.equal(esc(12), '12');
    const json = jsonForHtml({ s: '</script><!-- & \u2028\u2029' });
    assert.ok(!/[<>&\u2028\u2029]/.test(json), json);
    assert.deepEqual(JSON.parse(json), { s: '</script><!-- & \u2028\u2029' });
  });

  test('Accept-Language: the first known language by q then order, exact region ignored, else English', () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'en'],
      ['', 'en'],
      ['de-DE,de;q=0.9,en;q=0.5', 'de'],
      ['zh, fr;q=0.2, es;q=0.8', 'es'],
      ['it, fr;q=0.2, es;q=0.8', 'it'],
      ['ar-EG,ar;q=0.9,en;q=0.5', 'ar'],
      ['ja-JP', 'ja'],
      ['pt-BR, pl;q=0.9', 'pt'],
      ['nl-BE;q=0.4, sv-SE;q=0.5', 'sv'],
      ['FR-ca', 'fr'],
      ['de;q=0, fr;q=0.1', 'fr'],
      ['es;q=abc, de', 'de'],
      ['zh, he', 'en'],
      ['de;q=0.5, fr;q=0.5', 'de'],
    ];
    for (const [header, want] of cases) assert.equal(localeFromAcceptLanguage(header), want, String(header));
  });

  test('htmlHead: private pages send no referrer and are not indexed; links and tags in order, escaped', () => {
    const head = htmlHead({
      locale: 'de',
      title: 'A <b> & "c"',
      private: true,
      stylesheets: ['/assets/a.css?v=1', '/assets/b.css?v="x"'],
      tags: [jsonBlock('d', { x: '</script>' }), modulePreload('/assets/m.mjs'), moduleScript('/assets/s.js')],
    });
    assert.equal(
      head,
      [
        '<!doctype html>',
        '<html lang="de">',
        '<head>',
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="robots" content="noindex, nofollow">',
        '<link rel="icon" href="data:,">',
        '<title>A &#60;b&#62; &#38; &#34;c&#34;</title>',
        '<link rel="stylesheet" href="/assets/a.css?v=1">',
        '<link rel="stylesheet" href="/assets/b.css?v=&#34;x&#34;">',
        '<script type="application/json" id="d">{"x":"\\u003c/script\\u003e"}</script>',
        '<link rel="modulepreload" href="/assets/m.mjs">',
        '<script type="module" src="/assets/s.js"></script>',
        '</head>',
      ].join('\n'),
    );
    const pub = htmlHead({ locale: 'en', title: 'Docs', tags: [deferredScript('/assets/d.js')] });
    assert.ok(!pub.includes('referrer') && !pub.includes('robots'), pub);
    assert.ok(pub.endsWith('<script defer src="/assets/d.js"></script>\n</head>'), pub);
  });

  test('resultPage: the headline, then each further line; the state on body and status', () => {
    const page = resultPage('<head>', 'x"y', '✓', ['First <1>', 'Second', 'Third']);
    assert.match(page, /<body data-state="x&#34;y">/);
    assert.match(page, /role="status" data-state="x&#34;y"/);
    assert.match(page, /<h1>First &#60;1&#62;<\/h1>\n {4}<p>Second<\/p>\n {4}<p>Third<\/p>\n/);
    assert.ok(page.endsWith('</body>\n</html>\n'), 'a whole document');
  });

  test('the too-many-requests page speaks the browser’s language and links what its caller gives', () => {
    const de = renderTooManyRequestsPage('de-DE,de;q=0.9', 42, { stylesheets: ['/assets/x.css?v=1'] });
    assert.match(de, /<html lang="de">/);
    assert.match(de, /Bitte warten Sie 42 Sekunden/);
    assert.match(de, /<link rel="stylesheet" href="\/assets\/x.css\?v=1">/);
    assert.match(de, /data-state="rate_limited"/);
    const en = renderTooManyRequestsPage(undefined, 5, { stylesheets: [] });
    assert.match(en, /<html lang="en">/);
    assert.match(en, /Please wait 5 seconds/);
    assert.ok(!en.includes('stylesheet'), en);
    const ar = renderTooManyRequestsPage('ar', 7, { stylesheets: [] });
    assert.match(ar, /<html lang="ar" dir="rtl">/);
    assert.match(ar, /يُرجى الانتظار \(بالثواني: 7\)/);
    assert.match(renderTooManyRequestsPage('ja', 7, { stylesheets: [] }), /<html lang="ja">/);
  });

  test('htmlHead and dirAttr: right to left for Arabic only, and only for a known locale', () => {
    assert.match(htmlHead({ locale: 'ar', title: 'x' }), /^<!doctype html>\n<html lang="ar" dir="rtl">\n/);
    for (const l of ['en', 'de', 'ja', 'pl', 'ar-EG', 'he', ''])
      assert.ok(!htmlHead({ locale: l, title: 'x' }).includes(' dir='), l);
    assert.equal(dirAttr('ar'), ' dir="rtl"');
    assert.equal(dirAttr('sv'), '');
  });
});
