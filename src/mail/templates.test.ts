import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KNOWN_LOCALES } from '../i18n/i18n.js';
import { copyLink, escapeHtml, renderMail, signerLink, TEMPLATE_NAMES, type TemplateVars } from './templates.js';

const BASE = 'https://sign.example.com';
const TOKEN = 'tok_Ab-9_xYz';
const LINK = `${BASE}/sign/${TOKEN}`;
const AT = Date.parse('2026-12-06T10:00:00Z');

const base = { workspaceName: 'Acme GmbH', signerName: 'Ada Lovelace', documentTitle: 'NDA 2026' };
const varsFor: { [N in keyof TemplateVars]: TemplateVars[N] } = {
  invitation: { ...base, baseUrl: BASE, token: TOKEN, expiresAt: AT, message: 'Please sign by Friday.\nThanks!' },
  reminder: { ...base, baseUrl: `${BASE}/`, token: TOKEN, expiresAt: AT },
  expiry_warning: { ...base, baseUrl: BASE, token: TOKEN, expiresAt: AT },
  completed: base,
  declined: { ...base, declinedByName: 'Bob Builder' },
  expired: { ...base, expiredAt: AT },
  withdrawn: base,
  member_invitation: {
    workspaceName: 'Acme GmbH',
    inviterEmail: 'owner@acme.example',
    url: `${BASE}/dashboard/set-password/${TOKEN}`,
    expiresAt: AT,
  },
  verification_code: { ...base, code: '042917', expiresAt: AT },
};

describe('mail templates', () => {
  test('every template renders in every locale with no placeholder left', () => {
    for (const name of TEMPLATE_NAMES) {
      for (const locale of KNOWN_LOCALES) {
        const m = renderMail(name, locale, varsFor[name] as never);
        for (const part of [m.subject, m.text, m.html]) {
          assert.ok(!/\{\w+\}/.test(part), `${name}/${locale}: ${part}`);
          if (name === 'member_invitation')
            assert.ok(part.includes('Acme GmbH'), `${name}/${locale} names the workspace`);
          else assert.ok(part.includes('NDA 2026'), `${name}/${locale} names the document`);
        }
        assert.ok(!/[\r\n]/.test(m.subject), '!/[\\r\\n]/.test(m.subject)');
        const dir = locale === 'ar' ? ' dir="rtl"' : '';
        assert.ok(m.html.includes(`<html lang="${locale}"${dir}>`), `${name}/${locale}: <html lang dir>`);
      }
    }
  });

  test('the signer link appears verbatim in both parts of invitations, reminders and expiry warnings only', () => {
    for (const locale of KNOWN_LOCALES) {
      for (const name of ['invitation', 'reminder', 'expiry_warning'] as const) {
        const m = renderMail(name, locale, varsFor[name]);
        assert.ok(m.text.includes(LINK), `${name}/${locale} text`);
        assert.ok(m.html.includes(`href="${LINK}"`), `${name}/${locale} html`);
      }
      for (const name of ['completed', 'declined', 'expired', 'withdrawn'] as const) {
        const m = renderMail(name, locale, varsFor[name] as never);
        assert.ok(!m.text.includes('/sign/') && !m.html.includes('/sign/'), `${name}/${locale} has no link`);
      }
    }
  });

  test('the expiry warning names the expiry date in its first paragraph', () => {
    const m = renderMail('expiry_warning', 'de', varsFor.expiry_warning);
    assert.match(m.subject, /^Läuft bald ab: „NDA 2026“ von Acme GmbH$/);
    assert.match(m.text, /Die Anfrage läuft am .*2026.* ab; danach/);
  });

  test('the completion mail carries the signer’s copy link, its 30-day validity and no "contact us"', () => {
    const copy = { baseUrl: BASE, token: TOKEN, expiresAt: AT };
    const url = `${BASE}/copy/${TOKEN}`;
    for (const locale of KNOWN_LOCALES) {
      const m = renderMail('completed', locale, { ...base, copy });
      const plain = renderMail('completed', locale, base);
      for (const part of [m.text, m.html]) {
        assert.ok(part.includes(url), `${locale}: the link`);
        assert.ok(/\b30\b/.test(part), `${locale}: 30 days`);
        assert.ok(part.includes('2026'), `${locale}: the date it ends`);
        assert.ok(!/\{\w+\}/.test(part), `${locale}: no placeholder left`);
        assert.ok(!part.includes('/sign/'), `${locale}: never a signing link`);
      }
      assert.ok(m.html.includes(`href="${url}"`), `${locale}: a button`);
      assert.ok(!m.text.includes(plain.text.split('\n')[4]!), `${locale}: the "contact" line is gone`);
      assert.ok(!plain.text.includes('/copy/'), `${locale}: without a copy (old schema) no link`);
    }
    const en = renderMail('completed', 'en', { ...base, copy }).text;
    assert.match(en, /Open this link to download the signed document and its audit certificate:\n/);
    assert.match(en, /valid for 30 days, until December 6, 2026/);
    assert.ok(!/contact/.test(en), 'no "contact Acme for a copy"');
    assert.equal(copyLink('https://x.example/', 'a/b'), 'https://x.example/copy/a%2Fb');
    assert.throws(() => copyLink('javascript:alert(1)//', 'abc'), /http\(s\)/);
  });

  test('a dashboard invitation carries its one-time link, the inviter and the expiry; only http(s) links', () => {
    for (const locale of KNOWN_LOCALES) {
      const m = renderMail('member_invitation', locale, varsFor.member_invitation);
      assert.ok(m.text.includes(varsFor.member_invitation.url), `${locale} text has the link`);
      assert.ok(m.html.includes(`href="${varsFor.member_invitation.url}"`), `${locale} html has the link`);
      assert.ok(m.text.includes('owner@acme.example'), `${locale} names the inviter`);
    }
    assert.equal(
      renderMail('member_invitation', 'en', varsFor.member_invitation).subject,
      'You are invited to Acme GmbH on Signet',
    );
    assert.throws(() =>
      renderMail('member_invitation', 'en', { ...varsFor.member_invitation, url: 'javascript:alert(1)' }),
    );
  });

  test('subjects and wording are in the chosen language', () => {
    const subj = (l: (typeof KNOWN_LOCALES)[number]) => renderMail('invitation', l, varsFor.invitation).subject;
    assert.equal(subj('en'), 'Acme GmbH asks you to sign “NDA 2026”');
    assert.equal(subj('de'), 'Acme GmbH bittet Sie, „NDA 2026“ zu unterschreiben');
    assert.equal(subj('fr'), 'Acme GmbH vous invite à signer «\u00a0NDA 2026\u00a0»');
    assert.equal(subj('es'), 'Acme GmbH le solicita que firme «NDA 2026»');
    assert.match(renderMail('reminder', 'de', varsFor.reminder).subject, /^Erinnerung:/);
    assert.match(renderMail('invitation', 'de', varsFor.invitation).text, /läuft am 6\. Dezember 2026 um 10:00 UTC ab/);
    assert.match(renderMail('declined', 'es', varsFor.declined).text, /Bob Builder ha rechazado firmar «NDA 2026»/);
    assert.match(renderMail('expired', 'fr', varsFor.expired).text, /a expiré le 6 décembre 2026/);
  });

  test('Japanese: the words, the date in Japanese, left to right, the link intact', () => {
    const m = renderMail('invitation', 'ja', varsFor.invitation);
    assert.equal(m.subject, 'Acme GmbH から「NDA 2026」への署名依頼が届いています');
    assert.ok(m.text.startsWith('Ada Lovelace 様\n'), m.text);
    assert.match(m.text, /この依頼の有効期限は 2026年12月6日 10:00 UTC です。/);
    assert.ok(m.text.includes(`\n${LINK}\n`), 'the link on its own line');
    assert.ok(!m.html.includes('dir="rtl"') && !m.text.includes('\u200f'), 'no right-to-left marks');
    assert.match(m.html, /<a href="[^"]+" style="[^"]+">確認して署名<\/a>/);
    assert.match(
      renderMail('declined', 'ja', varsFor.declined).text,
      /Bob Builder さんが「NDA 2026」への署名を辞退しました/,
    );
  });

  test('Arabic: dir="rtl" in HTML, a right-to-left mark on each of our text lines, links and quotes left alone', () => {
    const m = renderMail('invitation', 'ar', varsFor.invitation);
    assert.equal(m.subject, 'تطلب منك Acme GmbH توقيع «NDA 2026»');
    assert.match(m.html, /^<!DOCTYPE html>\n<html lang="ar" dir="rtl">/);
    assert.match(m.html, /<body dir="rtl" /);
    assert.match(m.html, /<div dir="rtl" style="[^"]*text-align:right">/);
    assert.match(m.html, /<blockquote dir="auto" style="[^"]*border-right:3px/);
    assert.ok(m.html.includes(`<a href="${LINK}" dir="ltr"`), 'the fallback link reads left to right');
    assert.match(m.html, /تنتهي صلاحية هذا الطلب في 6 ديسمبر 2026/);
    const lines = m.text.split('\n');
    assert.equal(lines[0], '\u200fمرحبًا Ada Lovelace،');
    assert.ok(lines.includes(LINK), 'the link is a line of its own, without a mark');
    assert.ok(lines.includes('> Please sign by Friday.'), 'the sender’s words are quoted as written');
    for (const line of lines)
      if (line && line !== '--' && line !== LINK && !line.startsWith('> '))
        assert.ok(line.startsWith('\u200f'), `marked: ${JSON.stringify(line)}`);
    // Every Arabic mail, not just the invitation, reads right to left.
    for (const name of TEMPLATE_NAMES) {
      const other = renderMail(name, 'ar', varsFor[name] as never);
      assert.ok(other.html.includes('<html lang="ar" dir="rtl">'), `${name}: html`);
      assert.ok(other.text.startsWith('\u200f'), `${name}: text`);
    }
  });

  test('the sender message is kept, quoted in text and escaped with line breaks in HTML', () => {
    const m = renderMail('invitation', 'en', { ...varsFor.invitation, message: 'Hi <b>you</b> & co\r\nline 2' });
    assert.ok(
      m.text.includes('Message from Acme GmbH:\n> Hi <b>you</b> & co\n> line 2'),
      "m.text.includes('Message from Acme GmbH:\\n> Hi <b>you</b> & co\\n> line 2')",
    );
    assert.ok(
      m.html.includes('Hi &lt;b&gt;you&lt;/b&gt; &amp; co<br>line 2'),
      "m.html.includes('Hi &lt;b&gt;you&lt;/b&gt; &amp; co<br>line 2')",
    );
    const none = renderMail('invitation', 'en', { ...varsFor.invitation, message: '   ' });
    assert.ok(!none.text.includes('Message from'), "!none.text.includes('Message from')");
  });

  test('hostile values are escaped in HTML and kept as written in text', () => {
    const hostile = {
      ...varsFor.invitation,
      workspaceName: 'Zoë & "Co" <img src=x onerror=alert(1)>',
      signerName: '<script>alert(1)</script>',
      documentTitle: "O'Brien's </title><script>x</script>",
      message: '"><a href="javascript:alert(1)">click</a>',
    };
    const m = renderMail('invitation', 'en', hostile);
    assert.ok(!m.html.includes('<script'), "!m.html.includes('<script')");
    assert.ok(!m.html.includes('<img'), "!m.html.includes('<img')");
    assert.ok(!m.html.includes('javascript:alert(1)">'), "!m.html.includes('javascript:alert(1)\">')");
    assert.ok(
      m.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'),
      "m.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;')",
    );
    assert.ok(
      m.html.includes('Zoë &amp; &quot;Co&quot; &lt;img src=x onerror=alert(1)&gt;'),
      "m.html.includes('Zoë &amp; &quot;Co&quot; &lt;img src=x onerror=alert(1)&gt;')",
    );
    assert.ok(
      m.html.includes('O&#39;Brien&#39;s &lt;/title&gt;'),
      "m.html.includes('O&#39;Brien&#39;s &lt;/title&gt;')",
    );
    assert.ok(
      m.text.includes('Hello <script>alert(1)</script>,'),
      "m.text.includes('Hello <script>alert(1)</script>,')",
    );
    assert.ok(
      m.text.includes('Zoë & "Co" <img src=x onerror=alert(1)>'),
      'm.text.includes(\'Zoë & "Co" <img src=x onerror=alert(1)>\')',
    );
  });

  test('line breaks in names cannot reshape the subject', () => {
    const m = renderMail('invitation', 'en', { ...varsFor.invitation, documentTitle: 'A\r\nBcc: x@evil.example' });
    assert.equal(m.subject, 'Acme GmbH asks you to sign “A Bcc: x@evil.example”');
  });

  test('greeting without a name', () => {
    assert.ok(
      renderMail('completed', 'de', { ...base, signerName: ' ' }).text.startsWith('Guten Tag,\n'),
      "renderMail('completed', 'de', { ...base, signerName: ' ' }).text.startsWith('Guten Tag,\\n')",
    );
  });

  test('links: only http(s) bases, token encoded', () => {
    assert.equal(signerLink('http://localhost:3000/', 'abc'), 'http://localhost:3000/sign/abc');
    assert.equal(signerLink('https://x.example', 'a/b?c'), 'https://x.example/sign/a%2Fb%3Fc');
    assert.throws(() => signerLink('javascript:alert(1)//', 'abc'), /http\(s\)/);
    assert.throws(() => signerLink('https://x.example', ''), /empty/);
    assert.throws(() => renderMail('nope' as never, 'en', base as never), /unknown mail template/);
  });

  test('escapeHtml', () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
