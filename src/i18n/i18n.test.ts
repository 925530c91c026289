import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { catalogues, fill, formatDateTime, isKnownLocale, KNOWN_LOCALES, strings, t, type MessageKey } from './i18n.js';

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
  'es:dashboard.overview.plan',
  'es:dashboard.webhook.error',
]);

describe('i18n', () => {
  test('known locales are exact tags', () => {
    assert.deepEqual([...KNOWN_LOCALES], ['en', 'de', 'fr', 'es']);
    for (const l of KNOWN_LOCALES) assert.equal(isKnownLocale(l), true);
    for (const bad of ['de-DE', 'DE', 'de_DE', 'en-US', 'it', '', ' en', 'en ', null, undefined, 1, {}]) {
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
    assert.throws(() => t('it' as never, 'page.sign'), /unknown locale/);
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
    assert.throws(() => strings('it' as never, 'page'), /unknown locale/);
    // @ts-expect-error: a section that is no key's prefix does not compile.
    assert.deepEqual(strings('en', 'nope'), {});
  });

  test('dates are written in the locale, in UTC', () => {
    const at = Date.parse('2026-12-06T10:00:00Z');
    assert.match(formatDateTime('en', at), /December 6, 2026.*10:00.*UTC/);
    assert.match(formatDateTime('de', at), /6\. Dezember 2026.*10:00.*UTC/);
    assert.match(formatDateTime('fr', at), /6 décembre 2026.*10:00.*UTC/);
    assert.match(formatDateTime('es', at), /6 de diciembre de 2026.*10:00.*UTC/);
  });
});
