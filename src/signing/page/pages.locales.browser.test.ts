// Every page a signer or reviewer sees, in every language the app knows (KNOWN_LOCALES, so a new language is
// checked without touching this file), in Debian's Chromium at 1280 px against the real app: the verification gate
// (before and after a code was sent), the signer page with its PDF drawn, the page just after signing, the closed
// page the link shows afterwards, the review page of a staged template instance, and the embedded signing page.
// Each has `<html lang>` and direction of its language, nothing axe calls serious or critical, and no text sticking
// out sideways. One app and one browser for all; one screenshot of the signer page per language.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { dirOf, KNOWN_LOCALES, type Locale } from '../../i18n/i18n.js';
import { setAllowedOrigins } from '../../keys/keys.repo.js';
import { axe, launchChromium, openInTab, skipWithoutChromium } from '../../testing/browser.js';
import { startE2E, type E2E } from '../../testing/e2e.js';
import { templateBody, VALUES } from '../../templates/testing/fixtures.js';
import { plainPdf } from '../testing/requests.js';

const HOST = 'https://portal.example';
const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pages-locales-'));
/** The PDF and the fields laid on it follow the document, not the language. */
const DOCUMENT = '#viewer';

// Plain script text, so the test runner's transform never reaches code that runs in the browser. A box "overflows"
// when its own text is wider than the box (scrollWidth past clientWidth) or the box reaches past the viewport.
const OVERFLOW = String.raw`((exempt) => {
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && el.checkVisibility({ visibilityProperty: true }); };
  const ownText = (el) => [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.classList.length ? '.' + [...el.classList].join('.') : '');
  const out = [];
  const se = document.scrollingElement;
  if (se.scrollWidth > innerWidth) out.push('the page scrolls sideways: ' + se.scrollWidth + ' > ' + innerWidth);
  for (const el of document.body.querySelectorAll('*')) {
    if ((exempt && el.closest(exempt)) || !shown(el) || !ownText(el)) continue;
    const r = el.getBoundingClientRect();
    const text = ' "' + el.textContent.trim().replace(/\s+/g, ' ').slice(0, 40) + '"';
    if (r.right > innerWidth + 0.5 || r.left < -0.5) out.push(name(el) + text + ' reaches past the viewport');
    else if (getComputedStyle(el).display !== 'inline' && el.scrollWidth > el.clientWidth + 1)
      out.push(name(el) + text + ' is ' + el.scrollWidth + ' px of text in a ' + el.clientWidth + ' px box');
  }
  return out;
})`;

describe('every page in every language: lang, direction, axe, nothing sideways', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let tplId: string;
  before(async () => {
    e = await startE2E({ tier: 'enterprise' });
    const key = await e.h.db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('workspace_id', '=', e.workspaceId)
      .executeTakeFirstOrThrow();
    await setAllowedOrigins(e.h.db.kysely, key.id, [HOST]);
    browser = await launchChromium();
    const tpl = await e.api('POST', '/v1/templates', await templateBody('Services agreement'));
    assert.equal(tpl.status, 201, tpl.text);
    tplId = tpl.json.id;
  });
  after(async () => {
    await browser?.close();
    await e?.close();
  });

  /** Language, direction, axe and sideways overflow of the page as it is now; problems are returned, not thrown. */
  async function audit(page: Page, locale: Locale, label: string, t: { diagnostic(m: string): void }) {
    const bad: string[] = [];
    const [lang, dir, direction] = await page.evaluate(() => [
      document.documentElement.lang,
      document.documentElement.getAttribute('dir') ?? '',
      getComputedStyle(document.body).direction,
    ]);
    if (lang !== locale) bad.push(`${label}: <html lang="${lang}">`);
    // Left to right is the default, so only a right-to-left page carries the attribute.
    if (dir !== (dirOf(locale) === 'rtl' ? 'rtl' : '')) bad.push(`${label}: <html dir="${dir}">`);
    if (direction !== dirOf(locale)) bad.push(`${label}: body is laid out ${direction}`);
    bad.push(...(await axe(page, t, label)));
    const overflow = (await page.evaluate(`${OVERFLOW}(${JSON.stringify(DOCUMENT)})`)) as string[];
    bad.push(...overflow.map((o) => `${label}: ${o}`));
    return bad;
  }

  // One tab for every language (openInTab); its script errors go to the list of the language being looked at.
  async function open(url: string, problems: string[]): Promise<Page> {
    const { page } = await openInTab(browser.context, url, problems, (tab, sink) =>
      tab.on('pageerror', (err) => sink.push(`pageerror: ${err.message}`)),
    );
    return page;
  }

  const rendered = (page: Page) => page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });

  for (const locale of KNOWN_LOCALES) {
    test(`${locale}: gate, signer page, signed, closed, review, embed`, { timeout: 60_000 }, async (t) => {
      const tag = `${locale}.${Math.random().toString(36).slice(2, 8)}`;
      const email = `gate.${tag}@example.com`;
      const bad: string[] = [];
      const problems: string[] = [];
      const pdf = await plainPdf(1);

      // A request whose signer must first prove the address, one for the embedded session, a staged instance.
      const gated = await e.api('POST', '/v1/signing-requests', {
        title: 'Service agreement',
        locale,
        placement: 'auto_append',
        file: { name: 'agreement.pdf', content_base64: pdf },
        signers: [{ role: 'client', name: 'Ada Lovelace', email, verification: 'email_code' }],
      });
      assert.equal(gated.status, 201, gated.text);
      const framed = await e.api('POST', '/v1/signing-requests', {
        title: 'Service agreement',
        placement: 'auto_append',
        file: { name: 'agreement.pdf', content_base64: pdf },
        signers: [{ role: 'client', name: 'Mo Frame', email: `embed.${tag}@example.com` }],
      });
      assert.equal(framed.status, 201, framed.text);
      const session = await e.api('POST', '/v1/embedded/sign-sessions', {
        signing_request_id: framed.json.signing_requests[0].id,
        origin: HOST,
        locale,
        ttl_seconds: 600,
      });
      assert.equal(session.status, 201, session.text);
      const staged = await e.api('POST', `/v1/templates/${tplId}/instantiate`, {
        recipients: [
          { slot: 'client', name: 'Client Person', email: `client.with.a.long.address.${tag}@example.com` },
          { slot: 'provider', name: 'Provider Person', email: `provider.${tag}@example.com` },
        ],
        field_values: VALUES,
        review: true,
        locale,
      });
      assert.equal(staged.status, 201, staged.text);
      await e.work();
      const link = e.h.url(`/sign/${await e.linkFor(email)}`);

      // The gate, as first seen and once a code is on its way.
      const page = await open(link, problems);
      assert.equal(await page.locator('body').getAttribute('data-state'), 'verification');
      bad.push(...(await audit(page, locale, 'gate', t)));
      await page.locator('.gate-form button[type="submit"]').click();
      await page.locator('#gate-code').waitFor();
      bad.push(...(await audit(page, locale, 'gate, code sent', t)));
      await e.work();
      const mails = (await e.smtp.parsed()).filter((m) =>
        (Array.isArray(m.to) ? m.to : [m.to]).some((a) => a?.value.some((v) => v.address === email)),
      );
      const code = mails.map((m) => /^[\u200e\u200f]?(\d{6})$/m.exec(m.text ?? '')?.[1]).find(Boolean);
      assert.ok(code, `no code mailed to ${email}`);
      await page.locator('#gate-code').fill(code);
      await page.locator('.gate-form:has(#gate-code) button[type="submit"]').click();

      // The signer page with its document drawn, then signed, then the closed page the link leads to afterwards.
      await rendered(page);
      await page.locator('#viewer[data-pages]').waitFor({ timeout: 15_000 });
      const shot = path.join(SHOTS, `${locale}-signer.png`);
      await page.screenshot({ path: shot });
      t.diagnostic(`screenshot: ${shot}`);
      bad.push(...(await audit(page, locale, 'signer page', t)));
      await page.locator('#signature-typed').fill('Ada Lovelace');
      await page.locator('#sign-button:not([disabled])').click();
      await page.locator('#status[data-state="signed"]').waitFor({ timeout: 10_000 });
      bad.push(...(await audit(page, locale, 'signed', t)));
      await page.reload();
      assert.equal(await page.locator('body').getAttribute('data-state'), 'signed');
      bad.push(...(await audit(page, locale, 'closed', t)));

      // The review page of the staged instance.
      await page.goto(e.h.url(new URL(staged.json.template_instance.review_url).pathname));
      await rendered(page);
      bad.push(...(await audit(page, locale, 'review', t)));

      // The embedded page, opened at the top (a frame adds nothing to its own markup).
      await page.goto(e.h.url(new URL(session.json.url).pathname));
      await rendered(page);
      bad.push(...(await audit(page, locale, 'embed', t)));

      assert.deepEqual(problems, [], 'no script errors');
      assert.deepEqual(bad, [], `${locale}: pages with problems`);
    });
  }
});
