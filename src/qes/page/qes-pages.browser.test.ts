// The QES pages in Debian's Chromium, against the real app: its assets, its PDF route and its signer pages' headers
// (CSP included). The ceremony's routes are not part of this module, so the test serves, at the app's own origin, the
// HTML this module renders: the signer page with the QES box for a real request (GET /sign/<token>), and each outcome
// page; /qes/start answers as the contract says (a refusal, then { redirect_url }). In en and ar: the form posts the
// same body as /sign would, says "Opening …" while it waits, shows a refusal as a sign error, then leaves for the
// provider; every page passes axe with nothing serious, in its language's direction, nothing sideways; the way back is
// a plain link that works without JavaScript. Screenshots go to /tmp/qes-shots/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { dirOf, fill, strings, type Locale } from '../../i18n/i18n.js';
import { renderSignerPage, signerPageHeaders } from '../../signing/page/signer-page.js';
import { requestByToken, signerView } from '../../signing/signing.service.js';
import { plainPdf } from '../../signing/testing/requests.js';
import { axe, launchChromium, skipWithoutChromium } from '../../testing/browser.js';
import { startE2E, type E2E } from '../../testing/e2e.js';
import { QES_OUTCOMES, renderQesResultPage, type QesOutcome } from './qes-pages.js';

const SHOTS = '/tmp/qes-shots';
const PROVIDER = 'Example Trust';
const OUTCOMES = Object.keys(QES_OUTCOMES) as QesOutcome[];
const html = (body: string) => ({
  status: 200,
  headers: { ...signerPageHeaders(), 'content-type': 'text/html; charset=utf-8' },
  body,
});

/** Language, direction, axe and sideways scrolling of the page as it is now; problems are returned. */
async function audit(page: Page, locale: Locale, label: string, t: { diagnostic(m: string): void }) {
  const bad: string[] = [];
  const [lang, direction, wide] = await page.evaluate(() => [
    document.documentElement.lang,
    getComputedStyle(document.body).direction,
    document.scrollingElement!.scrollWidth > innerWidth,
  ]);
  if (lang !== locale) bad.push(`${label}: <html lang="${lang}">`);
  if (direction !== dirOf(locale)) bad.push(`${label}: laid out ${direction}`);
  if (wide) bad.push(`${label}: the page scrolls sideways`);
  return [...bad, ...(await axe(page, t, label))];
}

/** A promise and its resolver, so a route's answer waits for the test (nothing is slept through). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

describe(
  'QES pages in Chromium: signer page box and every outcome page, en and ar',
  { skip: skipWithoutChromium },
  () => {
    let e: E2E;
    let browser: { context: BrowserContext; close(): Promise<void> };
    before(async () => {
      fs.mkdirSync(SHOTS, { recursive: true });
      e = await startE2E();
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await e?.close();
    });

    /** A real open request in `locale`: its token and the signer view the page is rendered from. */
    async function request(locale: Locale) {
      const email = `qes.${locale}.${Math.random().toString(36).slice(2, 8)}@example.com`;
      const created = await e.api('POST', '/v1/signing-requests', {
        title: 'Service agreement',
        locale,
        placement: 'auto_append',
        file: { name: 'agreement.pdf', content_base64: await plainPdf(1) },
        signers: [{ role: 'client', name: 'Ada Lovelace', email }],
      });
      assert.equal(created.status, 201, created.text);
      await e.work();
      const token = await e.linkFor(email);
      const view = await signerView({ db: e.h.db, clock: e.h.clock }, await requestByToken({ db: e.h.db }, token));
      return { token, view };
    }

    for (const locale of ['en', 'ar'] as const) {
      test(
        `${locale}: the signer page's QES box, its wait, a refusal and the way to the provider`,
        { timeout: 60_000 },
        async (t) => {
          const S = strings(locale, 'page');
          const q = strings(locale, 'qes');
          const named = locale === 'ar' ? `\u2068${PROVIDER}\u2069` : PROVIDER;
          const { token, view } = await request(locale);
          const base = `/sign/${token}`;
          const problems: string[] = [];
          const page = await browser.context.newPage();
          page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
          await page.route(e.h.url(base), (route) =>
            route.fulfill(html(renderSignerPage(e.h.app.assets, view, { base, qes: { provider: PROVIDER } }))),
          );
          // /qes/start: first a refusal, then the provider's address; each answer waits for the test's go.
          const starts: unknown[] = [];
          const answers = [gate(), gate()];
          await page.route(e.h.url(`${base}/qes/start`), async (route: Route) => {
            const n = starts.push(route.request().postDataJSON());
            await answers[n - 1]!.opened;
            if (n === 1)
              return route.fulfill({
                status: 503,
                contentType: 'application/json',
                body: '{"code":"qes_unavailable"}',
              });
            return route.fulfill({
              status: 200,
              contentType: 'application/json',
              body: JSON.stringify({ redirect_url: e.h.url('/qes-test/authorize?state=s1') }),
            });
          });
          await page.route(e.h.url('/qes-test/authorize?state=s1'), (route) =>
            route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>provider</title>' }),
          );
          let signs = 0;
          page.on('request', (r) => {
            if (r.method() === 'POST' && new URL(r.url()).pathname === `${base}/sign`) signs++;
          });

          await page.goto(e.h.url(base));
          await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
          assert.equal(await page.locator('.qes-intro h3').textContent(), q.introTitle);
          assert.equal(await page.locator('#qes-intro-body').textContent(), fill(q.introBody, { provider: named }));
          const button = page.locator('#sign-button');
          assert.equal(await button.textContent(), fill(q.continueTo, { provider: named }));
          await page.locator('#signature-typed').fill('Ada Lovelace');
          await page.locator('#sign-button:not([disabled])').waitFor();
          await page.screenshot({ path: path.join(SHOTS, `signer-qes-${locale}.png`), fullPage: true });
          const bad = await audit(page, locale, 'signer page with QES box', t);

          // A refusal: the wait line while the answer is pending, then the sign error, and the form usable again.
          await button.click();
          await page.locator('#sign-wait:not(:empty)').waitFor();
          assert.equal(await page.locator('#sign-wait').textContent(), fill(q.opening, { provider: named }));
          assert.equal(await button.isDisabled(), true, 'busy while waiting');
          answers[0]!.open();
          await page.locator('#sign-error:not(:empty)').waitFor();
          assert.equal(await page.locator('#sign-error').textContent(), S.errorGeneric);
          assert.equal(await page.locator('#sign-wait').textContent(), '', 'the wait line is gone');
          await page.locator('#sign-button:not([disabled])').waitFor();
          bad.push(...(await audit(page, locale, 'signer page, refused start', t)));

          // Then the provider's address: the browser leaves for it.
          await button.click();
          await page.locator('#sign-wait:not(:empty)').waitFor();
          answers[1]!.open();
          await page.waitForURL(e.h.url('/qes-test/authorize?state=s1'));
          assert.deepEqual(starts, [
            { signature: { type: 'typed', text: 'Ada Lovelace' } },
            { signature: { type: 'typed', text: 'Ada Lovelace' } },
          ]);
          assert.equal(signs, 0, 'nothing was posted to /sign');
          await page.close();
          assert.deepEqual(problems, [], 'no script errors');
          assert.deepEqual(bad, [], `${locale}: pages with problems`);
        },
      );

      test(`${locale}: every outcome page`, { timeout: 60_000 }, async (t) => {
        const q = strings(locale, 'qes');
        const { token } = await request(locale);
        const retryHref = `/sign/${token}`;
        const page = await browser.context.newPage();
        await page.route(e.h.url('/qes-test/result/*'), (route) => {
          const outcome = new URL(route.request().url()).pathname.split('/').pop() as QesOutcome;
          return route.fulfill(
            html(renderQesResultPage(e.h.app.assets, locale, outcome, { retryHref, provider: PROVIDER })),
          );
        });
        const bad: string[] = [];
        for (const outcome of OUTCOMES) {
          await page.goto(e.h.url(`/qes-test/result/${outcome}`));
          assert.equal(await page.locator('body').getAttribute('data-state'), outcome);
          assert.equal(await page.locator('h1').textContent(), q[QES_OUTCOMES[outcome].title]);
          assert.equal(await page.locator('a.button').count(), outcome === 'signed' ? 0 : 1, outcome);
          bad.push(...(await audit(page, locale, outcome, t)));
          if (outcome === 'cert_expired' || outcome === 'signed')
            await page.screenshot({ path: path.join(SHOTS, `outcome-${outcome}-${locale}.png`), fullPage: true });
        }
        // The way back is a plain link: it leads to the (real) signer page.
        await page.goto(e.h.url('/qes-test/result/cancelled'));
        await page.getByRole('link', { name: q.retry }).click();
        await page.waitForURL(e.h.url(retryHref));
        assert.equal(await page.locator('body').getAttribute('data-state'), 'open');
        await page.close();
        assert.deepEqual(bad, [], `${locale}: pages with problems`);
      });
    }

    test('the way back works without JavaScript', { timeout: 30_000 }, async () => {
      const { token } = await request('en');
      const noJs = await launchChromium({ javaScriptEnabled: false });
      try {
        const page = await noJs.context.newPage();
        await page.route(e.h.url('/qes-test/result/refused'), (route) =>
          route.fulfill(html(renderQesResultPage(e.h.app.assets, 'en', 'refused', { retryHref: `/sign/${token}` }))),
        );
        await page.goto(e.h.url('/qes-test/result/refused'));
        await page.getByRole('link', { name: strings('en', 'qes').retry }).click();
        await page.waitForURL(e.h.url(`/sign/${token}`));
        assert.equal(await page.locator('body').getAttribute('data-state'), 'open');
      } finally {
        await noJs.close();
      }
    });
  },
);
