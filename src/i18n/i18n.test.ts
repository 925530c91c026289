import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  catalogues,
  dirOf,
  fill,
  formatDateTime,
  isKnownLocale,
  KNOWN_LOCALES,
  strings,
  t,
  type MessageKey,
} from './i18n.js';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
// Words that are the same in English and the other language; everything else must really be translated.
const SAME_AS_ENGLISH = new Set([
  'fr:page.date',
  'fr:page.signature',
  'fr:verify.page.signature',
  'es:verify.page.no',
  'de:page.text',
  ...['de', 'fr', 'es'].flatMap((l) =>
    ['nav.webhooks', 'webhook.title', 'webhook.back', 'webhook.heading'].map((k) => `${l}:dashboard.${k}`),
  ),
  ...['de', 'fr', 'es'].map((l) => `${l}:audit.eventIp`),
  'de:dashboard.common.status',
  'fr:dashboard.nav.documents',
  'fr:dashboard.document.actions',
  'fr:dashboard.keys.active',
  'fr:audit.document',
  'fr:audit.signaturesTitle',
  'fr:audit.signatureDate',
  'fr:audit.signatureOf',
  'es:dashboard.overview.plan',
  'es:dashboard.webhook.error',
  // "Logo" is the word in these languages too.
  ...['de', 'fr', 'it', 'nl', 'pl'].map((l) => `${l}:dashboard.settings.logo`),
  // "via" is how French, Dutch and Swedish name the service a message came through, too.
  ...['fr', 'nl', 'sv'].map((l) => `${l}:page.viaService`),
  // Loanwords and international words the other languages also write as English does (E-mail, Status, Webhook, …).
  ...Object.entries({
    it: 'review.channelEmail dashboard.nav.account dashboard.common.email dashboard.signIn.password dashboard.webhooks.endpoint audit.email audit.userAgent verify.page.no',
    nl: 'review.channelEmail dashboard.nav.account dashboard.common.email dashboard.common.status dashboard.document.downloads dashboard.document.reason dashboard.webhooks.ofDocument audit.document audit.email verify.page.intact copy.downloads',
    pt: 'review.channelEmail dashboard.common.email dashboard.common.status dashboard.document.downloads dashboard.document.reason dashboard.webhooks.endpoint audit.email copy.downloads',
    pl: 'review.channelEmail dashboard.common.email dashboard.overview.plan audit.email',
    sv: 'page.text review.templateVersion dashboard.common.status',
  }).flatMap(([l, keys]) => keys.split(' ').map((k) => `${l}:${k}`)),
  ...['it', 'nl', 'pt', 'pl', 'sv'].flatMap((l) =>
    ['webhook.title', 'webhook.heading', ...(l === 'it' || l === 'pl' ? [] : ['nav.webhooks', 'webhook.back'])].map(
      (k) => `${l}:dashboard.${k}`,
    ),
  ),
  ...['it', 'nl', 'pt'].map((l) => `${l}:audit.eventIp`),
]);

describe('i18n', () => {
  test('known locales are exact tags', () => {
    assert.deepEqual([...KNOWN_LOCALES], ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'pl', 'sv', 'ja', 'ar']);
    for (const l of KNOWN_LOCALES) assert.equal(isKnownLocale(l), true);
    for (const bad of [
      'de-DE',
      'DE',
      'de_DE',
      'en-US',
      'ar-EG',
      'pt-BR',
      'zh',
      'he',
      '',
      ' en',
      'en ',
      null,
      undefined,
      1,
      {},
    ]) {
      assert.equal(isKnownLocale(bad), false, String(bad));
    }
  });

  test('every catalogue has the same keys and placeholders as English, and is really translated', () => {
    const keys = Object.keys(catalogues.en) as MessageKey[];
    for (const l of KNOWN_LOCALES) {
      assert.deepEqual(Object.keys(catalogues[l]).sort(), [...keys].sort(), l);
      for (const k of keys) {
        const v = catalogues[l][k];
        assert.ok(v.trim().length > 0, `${l}:${k} empty`);
        assert.deepEqual(placeholders(v), placeholders(catalogues.en[k]), `${l}:${k} placeholders`);
        if (l !== 'en' && !SAME_AS_ENGLISH.has(`${l}:${k}`))
          assert.notEqual(v, catalogues.en[k], `${l}:${k} untranslated`);
      }
    }
  });

  test('strings(locale, "page") covers the signer page in every locale', () => {
    const needed = [
      'title',
      'reviewAndSign',
      'typeSignature',
      'drawSignature',
      'clear',
      'sign',
      'decline',
      'declineReason',
      'confirmDecline',
      'signedThanks',
      'declinedDone',
      'expired',
      'withdrawn',
      'notOpen',
      'loading',
      'pageOf',
      'signHere',
      'initials',
      'date',
      'text',
      'errorGeneric',
      'errorNetwork',
    ];
    for (const l of KNOWN_LOCALES) {
      const s = strings(l, 'page') as Record<string, string>;
      for (const k of needed) assert.ok(s[k], `${l}:${k}`);
      assert.ok(
        !Object.keys(s).some((k) => k.startsWith('page.') || k.startsWith('mail.')),
        "!Object.keys(s).some((k) => k.startsWith('page.') || k.startsWith('mail.'))",
      );
    }
    assert.equal(strings('en', 'page').reviewAndSign, 'Review and sign');
    assert.equal(strings('de', 'page').decline, 'Ablehnen');
    assert.equal(fill(strings('fr', 'page').pageOf, { page: 2, pages: 5 }), 'Page 2 sur 5');
    assert.equal(t('es', 'page.pageOf', { page: 1, pages: 3 }), 'Página 1 de 3');
  });

  test('t fills placeholders literally and refuses a missing value', () => {
    assert.equal(t('en', 'page.sentBy', { workspace: '{title} $& $1' }), 'Sent by {title} $& $1');
    assert.throws(() => t('en', 'page.sentBy'), /missing value for \{workspace\}/);
    assert.throws(() => t('xx' as never, 'page.sign'), /unknown locale/);
  });

  test('strings picks one section, without its prefix, in the catalogue order', () => {
    for (const l of KNOWN_LOCALES) {
      const review = strings(l, 'review');
      const want = Object.keys(catalogues[l])
        .filter((k) => k.startsWith('review.'))
        .map((k) => k.slice('review.'.length));
      assert.deepEqual(Object.keys(review), want, l);
      assert.equal(review.back, catalogues[l]['review.back']);
      assert.equal(strings(l, 'sms').invitation, catalogues[l]['sms.invitation']);
      assert.ok(Object.isFrozen(review), 'frozen');
    }
    assert.throws(() => strings('xx' as never, 'page'), /unknown locale/);
    // @ts-expect-error: a section that is no key's prefix does not compile.
    assert.deepEqual(strings('en', 'nope'), {});
  });

  test('dates are written in the locale, in UTC', () => {
    const at = Date.parse('2026-12-06T10:00:00Z');
    assert.match(formatDateTime('en', at), /December 6, 2026.*10:00.*UTC/);
    assert.match(formatDateTime('de', at), /6\. Dezember 2026.*10:00.*UTC/);
    assert.match(formatDateTime('fr', at), /6 décembre 2026.*10:00.*UTC/);
    assert.match(formatDateTime('es', at), /6 de diciembre de 2026.*10:00.*UTC/);
    assert.match(formatDateTime('it', at), /6 dicembre 2026.*10:00.*UTC/);
    assert.match(formatDateTime('nl', at), /6 december 2026.*10:00.*UTC/);
    assert.match(formatDateTime('pt', at), /6 de dezembro de 2026.*10:00.*UTC/);
    assert.match(formatDateTime('pl', at), /6 grudnia 2026.*10:00.*UTC/);
    assert.match(formatDateTime('sv', at), /6 december 2026.*10:00.*UTC/);
    assert.match(formatDateTime('ja', at), /2026年12月6日.*10:00.*UTC/);
    // Arabic digits and month name, whatever the ICU version's exact punctuation.
    assert.match(formatDateTime('ar', at), /ديسمبر/);
    assert.match(formatDateTime('ar', at), /[٢2][٠0][٢2][٦6]/);
    for (const l of KNOWN_LOCALES) assert.notEqual(formatDateTime(l, at), '', l);
  });

  test('only Arabic is written right to left', () => {
    assert.equal(dirOf('ar'), 'rtl');
    for (const l of KNOWN_LOCALES.filter((l) => l !== 'ar')) assert.equal(dirOf(l), 'ltr', l);
  });

  test('every language keeps English’s placeholders, typographic care and plural pairs', () => {
    for (const l of KNOWN_LOCALES) {
      const c = catalogues[l];
      // SMS wording is one line; anything typed as ASCII quotes elsewhere would be a slip from the English source.
      for (const k of ['sms.invitation', 'sms.reminder'] as const) assert.ok(!/[\n\r]/.test(c[k]), `${l}:${k}`);
      // A plural pair is filled with the same variables in both forms.
      assert.deepEqual(
        placeholders(c['dashboard.document.pageCount.one']),
        placeholders(c['dashboard.document.pageCount.other']),
        `${l}: pageCount forms`,
      );
      for (const [k, v] of Object.entries(c)) assert.equal(v, v.trim(), `${l}:${k} has no stray spaces`);
    }
  });
});
