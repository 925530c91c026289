// The SMS texts: every kind in every locale, GSM-7 and UCS-2 segments, cutting long names to fit.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KNOWN_LOCALES } from '../i18n/i18n.js';
import { MAX_SMS_SEGMENTS, renderSms, smsSegments, SMS_TEMPLATE_NAMES, type SmsVars } from './messages.js';
import { EXPIRES, URL_ } from './testing/sms.js';

describe('SMS texts', () => {
  const vars: SmsVars = {
    workspaceName: 'Acme',
    documentTitle: 'NDA',
    signerName: 'Ada',
    url: URL_,
    expiresAt: EXPIRES,
  };

  // Scripts outside GSM-7: the whole message is UCS-2 (70 UTF-16 units a segment).
  const UCS2_LOCALES = new Set(['ja', 'ar']);

  test('every kind in every locale: one GSM-7 segment (two UCS-2 in ja, ar) with short names, link and date intact', () => {
    for (const locale of KNOWN_LOCALES)
      for (const kind of SMS_TEMPLATE_NAMES) {
        const text = renderSms(kind, locale, vars);
        assert.ok(text.includes(` ${URL_} `), `${locale} ${kind}: ${text}`);
        assert.ok(text.includes('2026-12-01'), "text.includes('2026-12-01')");
        assert.ok(!/[<>\n]/.test(text), '!/[<>\\n]/.test(text)');
        const seg = smsSegments(text);
        const ucs2 = UCS2_LOCALES.has(locale);
        assert.equal(seg.encoding, ucs2 ? 'ucs2' : 'gsm7', `${locale} ${kind}: ${text}`);
        assert.ok(seg.segments <= (ucs2 ? 2 : 1), `${locale} ${kind} is ${seg.units} units: ${text}`);
      }
    assert.match(renderSms('invitation', 'ja', vars), /^Acmeから「NDA」への署名依頼: https:/);
    assert.match(renderSms('reminder', 'ar', vars), /^تذكير: طلب توقيع من Acme على «NDA»: https:/);
    assert.equal(
      renderSms('invitation', 'en', vars),
      `Acme asks you to sign "NDA": ${URL_} (link expires 2026-12-01).`,
    );
    assert.match(renderSms('reminder', 'fr', vars), /^Rappel : Acme vous invite à signer "NDA" : /);
  });

  test('segments: GSM-7 extension characters count twice, anything else switches to UCS-2', () => {
    assert.deepEqual(smsSegments('a'.repeat(160)), { encoding: 'gsm7', units: 160, segments: 1 });
    assert.deepEqual(smsSegments('a'.repeat(161)), { encoding: 'gsm7', units: 161, segments: 2 });
    assert.deepEqual(smsSegments('€'.repeat(80)), { encoding: 'gsm7', units: 160, segments: 1 });
    assert.deepEqual(smsSegments('a'.repeat(69) + '“'), { encoding: 'ucs2', units: 70, segments: 1 });
    assert.deepEqual(smsSegments('a'.repeat(70) + '😀'), { encoding: 'ucs2', units: 72, segments: 2 });
  });

  test(`long names and titles are cut to fit ${MAX_SMS_SEGMENTS} segments; the link never is`, () => {
    for (const [workspaceName, documentTitle] of [
      ['Acme '.repeat(60), 'Master services agreement '.repeat(40)],
      ['株式会社'.repeat(30), '秘密保持契約書'.repeat(40)],
      ['Acme', '😀'.repeat(300)],
      ['Line\nbreak\u0000Co', 'Title\r\nwith breaks'],
    ])
      for (const locale of KNOWN_LOCALES) {
        const text = renderSms('reminder', locale, { ...vars, workspaceName, documentTitle });
        assert.ok(text.includes(` ${URL_} `), text);
        assert.ok(smsSegments(text).segments <= MAX_SMS_SEGMENTS, text);
        assert.ok(!/[\n\r\u0000]/.test(text), '!/[\\n\\r\\u0000]/.test(text)');
      }
    const cut = renderSms('invitation', 'en', { ...vars, documentTitle: 'x'.repeat(1000) });
    assert.match(cut, /"x+\.\.\.":/);
    assert.equal(smsSegments(cut).segments, MAX_SMS_SEGMENTS);
    assert.throws(() => renderSms('invitation', 'en', { ...vars, url: `https://x/${'a'.repeat(600)}` }), /segments/);
  });
});
