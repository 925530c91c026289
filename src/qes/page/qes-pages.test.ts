// The QES words on the signer's pages, as HTML: every ceremony outcome's page in several languages (its heading and
// sentence from the catalogue, the provider named or the catalogue's fallback, escaping, direction, the way back),
// and the signer page's qualified-signature box, button and data.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { catalogues, fill, KNOWN_LOCALES, strings, type Locale } from '../../i18n/i18n.js';
import { renderSignerPage } from '../../signing/page/signer-page.js';
import type { Assets } from '../../web/assets.js';
import { esc } from '../../web/html.js';
import { QES_OUTCOMES, renderQesResultPage, type QesOutcome } from './qes-pages.js';

// The pages only ask the assets for URLs.
const assets: Assets = {
  url: (name) => `/assets/${name}?v=test`,
  sendUnversioned: () => assert.fail('unused'),
  names: [],
};
const OUTCOMES = Object.keys(QES_OUTCOMES) as QesOutcome[];
const FSI = '\u2068';
const PDI = '\u2069';

const textOf = (html: string, re: RegExp) => re.exec(html)?.[1];
const decode = (s: string) => s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));

describe('renderQesResultPage', () => {
  test('every outcome, each with its own heading and sentence', () => {
    assert.deepEqual([...OUTCOMES].sort(), [
      'bad_signature',
      'busy',
      'cancelled',
      'ceremony_expired',
      'cert_expired',
      'cert_not_qualified',
      'cert_revoked',
      'cert_untrusted',
      'no_credential',
      'provider_down',
      'refused',
      'revocation_unknown',
      'signed',
    ]);
    const q = strings('en', 'qes');
    const titles = OUTCOMES.map((o) => q[QES_OUTCOMES[o].title]);
    assert.equal(new Set(titles).size, OUTCOMES.length, 'no two outcomes share a heading');
  });

  for (const locale of ['en', 'de', 'ja', 'ar'] as const satisfies readonly Locale[])
    test(`${locale}: every outcome names the provider, says what to do and offers the way back`, () => {
      const q = strings(locale, 'qes');
      const provider = 'Example Trust';
      const named = locale === 'ar' ? `${FSI}${provider}${PDI}` : provider;
      for (const outcome of OUTCOMES) {
        const html = renderQesResultPage(assets, locale, outcome, { retryHref: '/sign/tok', provider });
        const c = QES_OUTCOMES[outcome];
        assert.match(html, new RegExp(`<html lang="${locale}"${locale === 'ar' ? ' dir="rtl"' : ''}>`), outcome);
        assert.match(html, /<meta name="referrer" content="no-referrer">/, `${outcome}: private page`);
        assert.match(html, /<link rel="stylesheet" href="\/assets\/signer\.css\?v=test">/, `${outcome}: signer.css`);
        assert.doesNotMatch(html, /<script/, `${outcome}: no script`);
        assert.equal(textOf(html, /<body data-state="([^"]+)">/), outcome);
        assert.equal(decode(textOf(html, /<h1>([^<]*)<\/h1>/) ?? ''), q[c.title], `${outcome}: heading`);
        const p = decode(textOf(html, /<\/h1>\s*<p>([^<]*)<\/p>/) ?? '');
        const want = c.body ? fill(q[c.body], { provider: named }) : catalogues[locale]['page.signedNext'];
        assert.equal(p, want, `${outcome}: sentence`);
        if (c.body && q[c.body].includes('{provider}')) assert.ok(p.includes(named), `${outcome}: names the provider`);
        assert.doesNotMatch(html, /\{provider\}/, `${outcome}: no placeholder left`);
        const link = /<a class="button primary" href="([^"]*)">([^<]*)<\/a>/.exec(html);
        if (outcome === 'signed') assert.equal(link, null, 'a signature made offers no retry');
        else assert.deepEqual([link?.[1], decode(link?.[2] ?? '')], ['/sign/tok', q.retry], `${outcome}: retry`);
      }
    });

  test('without a provider the sentences say "your trust service provider", in each language', () => {
    for (const locale of KNOWN_LOCALES) {
      const q = strings(locale, 'qes');
      const html = renderQesResultPage(assets, locale, 'cert_expired');
      assert.ok(decode(html).includes(fill(q.certExpiredBody, { provider: q.yourProvider })), locale);
      assert.doesNotMatch(html, /<a /, `${locale}: no retry link without retryHref`);
    }
  });

  test('the provider and the retry address are escaped', () => {
    const html = renderQesResultPage(assets, 'en', 'provider_down', {
      provider: '<img src=x onerror=alert(1)> & "Co"',
      retryHref: '/sign/a"><script>x</script>',
    });
    assert.doesNotMatch(html, /<img|<script/, 'no markup from values');
    assert.ok(html.includes(esc('<img src=x onerror=alert(1)> & "Co"')), 'the name, escaped');
    assert.ok(html.includes(`href="${esc('/sign/a"><script>x</script>')}"`), 'the href, escaped');
  });

  test('an unknown locale falls back to English', () => {
    const html = renderQesResultPage(assets, 'xx', 'busy');
    assert.match(html, /<html lang="en">/, 'lang en');
    assert.ok(html.includes(esc(catalogues.en['qes.busyTitle'])), 'English heading');
  });
});

describe('renderSignerPage with a qualified signature', () => {
  // The page reads these parts of the signer view only.
  const view = (locale: Locale) =>
    ({
      request: { name: 'Ada Lovelace', email: 'ada@example.com' },
      document: { locale, title: 'Contract', page_count: 1 },
      workspaceName: 'Acme',
      fields: [],
      state: 'open',
    }) as unknown as Parameters<typeof renderSignerPage>[1];
  const dataOf = (html: string) => JSON.parse(textOf(html, /id="signer-data">([^<]*)<\/script>/) ?? 'null');

  test('the box sits above the consent, the button continues to the provider, the data says qes', () => {
    for (const locale of ['en', 'ar'] as const) {
      const q = strings(locale, 'qes');
      const provider = 'Example <Trust>';
      const named = locale === 'ar' ? `${FSI}${provider}${PDI}` : provider;
      const html = renderSignerPage(assets, view(locale), { base: '/sign/tok', qes: { provider } });
      const box = html.indexOf('class="qes-intro"');
      assert.ok(box > 0 && box < html.indexOf('class="consent"'), `${locale}: the box comes before the consent`);
      assert.ok(html.includes(`>${esc(q.introTitle)}</h3>`), `${locale}: heading`);
      assert.ok(html.includes(esc(fill(q.introBody, { provider: named }))), `${locale}: the two sentences`);
      const button = /<button type="submit" id="sign-button"([^>]*)>([^<]*)<\/button>/.exec(html);
      assert.equal(decode(button?.[2] ?? ''), fill(q.continueTo, { provider: named }), `${locale}: button`);
      assert.match(button?.[1] ?? '', /aria-describedby="qes-intro-body"/, `${locale}: button described by the box`);
      assert.match(html, /id="sign-wait" role="status"/, `${locale}: a status line for the wait`);
      const data = dataOf(html);
      assert.equal(data.qes, true);
      assert.equal(data.qesOpening, fill(q.opening, { provider: named }));
      assert.doesNotMatch(html, /<Trust>/, `${locale}: the name is escaped`);
    }
  });

  test('without qes the page is the plain signer page', () => {
    const html = renderSignerPage(assets, view('en'), { base: '/sign/tok' });
    assert.doesNotMatch(html, /qes-intro|sign-wait/, 'no box, no wait line');
    assert.match(html, /<button type="submit" id="sign-button" class="button primary" disabled>Sign<\/button>/);
    assert.equal(dataOf(html).qes, undefined);
  });
});
