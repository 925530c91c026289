// The embedded signing page on a 360×740 phone, framed by a registered host page as integrators mount it, in Debian's
// Chromium: a finger draws the signature inside the frame and signs (the host hears `signed`), and a keyboard-only
// signer tabs from the host into the frame, reaches every control with a visible focus, and signs with a typed
// signature and Enter. Neither page scrolls sideways, tap targets are 44 px, axe finds nothing serious in the frame.
// Signet runs on a loopback port behind https://signet.test (Playwright routes the origin to it, real headers).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { strings, type Locale } from '../i18n/i18n.js';
import { setAllowedOrigins } from '../keys/keys.repo.js';
import { axe, launchChromium, PHONE, skipWithoutChromium } from '../testing/browser.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import {
  controlsOf,
  focusedIn,
  focusProblems,
  keyOf,
  layoutProblems,
  pngInk,
  tabTo,
  tapUntil,
  touchStroke,
  walk,
} from '../testing/mobile.js';

/** The languages the page is checked in; each runs the same steps, finding controls by the catalogue's words. */
const LOCALES: readonly Locale[] = ['en', 'ja', 'ar'];
const SIGNET = 'https://signet.test';
const HOST = 'https://portal.example';
/** The fields laid over the PDF follow the document's scale; the panel offers the same actions at full size. */
const OVERLAY = '.fields';
/** What must fit its container at 360 px: the PDF's pages, the signing panel, the outcome. */
const CONTAINED = '.page-wrap, .panel, .status';
const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-embed-mobile-'));

/** A phone-sized host page: the session mounted full width, the callbacks recorded. */
const hostPage = (sessionUrl: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme portal</title><script src="${SIGNET}/embed/signet.js"></script>
<style>body{font:16px system-ui;margin:0}header{background:#1f2937;color:#fff;padding:12px 16px}</style></head>
<body><header>Acme portal</header><main><div id="signing"></div></main>
<script>
window.events = [];
Signet.mount(document.getElementById('signing'), ${JSON.stringify(sessionUrl)}, {
  onEvent: (m) => { if (m.type !== 'resize') window.events.push(m.type); },
});
</script></body></html>`;

describe('the embed page on a phone and with the keyboard alone', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let phone: Awaited<ReturnType<typeof launchChromium>>;
  const pages = new Map<string, string>();

  before(async () => {
    e = await startE2E({ tier: 'enterprise', env: { BASE_URL: SIGNET } });
    const key = await e.h.db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('workspace_id', '=', e.workspaceId)
      .executeTakeFirstOrThrow();
    await setAllowedOrigins(e.h.db.kysely, key.id, [HOST]);
    phone = await launchChromium({ phone: true });
    await phone.context.route(`${SIGNET}/**`, async (route) => {
      const u = new URL(route.request().url());
      const response = await route.fetch({ url: e.h.url(u.pathname + u.search), maxRedirects: 0 });
      await route.fulfill({ response });
    });
    await phone.context.route(`${HOST}/**`, async (route) => {
      const body = pages.get(route.request().url());
      await route.fulfill(
        body === undefined
          ? { status: 404, body: 'not found' }
          : { status: 200, contentType: 'text/html; charset=utf-8', body },
      );
    });
  });
  after(async () => {
    await phone?.close();
    await e?.close();
  });

  /** A session in `locale` on a new request, mounted on its own host page; resolves once page 1 is drawn. */
  async function mounted(locale: Locale, problems: string[]): Promise<{ page: Page; frame: Frame; id: string }> {
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: [{ role: 'client', email: `m.${Math.random().toString(36).slice(2, 8)}@example.com`, name: 'Mo Bile' }],
      file: { name: 'contract.pdf', content_base64: b64(await makePdf({ pages: 1, text: [['Service contract']] })) },
      placement: 'auto_append',
      title: 'Service contract',
    });
    assert.equal(r.status, 201, r.text);
    const id = r.json.signing_requests[0].id as string;
    const s = await e.api('POST', '/v1/embedded/sign-sessions', {
      signing_request_id: id,
      origin: HOST,
      locale,
      ttl_seconds: 600,
    });
    assert.equal(s.status, 201, s.text);
    const url = `${HOST}/${s.json.id}`;
    pages.set(url, hostPage(s.json.url));
    const page = await phone.context.newPage();
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(url);
    const inner = page.frameLocator('#signing iframe');
    await inner.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
    await inner.locator('#viewer[data-pages]').waitFor({ timeout: 15_000 });
    await page.waitForFunction(() => (window as any).events.includes('viewed'), undefined, { timeout: 10_000 });
    const frame = page.frames().find((f) => f.url().startsWith(`${SIGNET}/embed/sign/`))!;
    return { page, frame, id };
  }

  const shot = async (page: Page, name: string, t: { diagnostic(m: string): void }) => {
    const file = path.join(SHOTS, `${name}.png`);
    await page.screenshot({ path: file });
    t.diagnostic(`screenshot: ${file}`);
  };

  const layout = async (page: Page, frame: Frame, label: string) => [
    ...(await layoutProblems(page, `${label} (host)`, { maxWidth: PHONE.width })),
    ...(await layoutProblems(frame, label, { exempt: OVERLAY, maxWidth: PHONE.width, contained: CONTAINED })),
  ];

  for (const locale of LOCALES) {
    const s = strings(locale, 'page');

    test(`${locale}: a finger draws inside the frame and signs; the host hears it`, { timeout: 90_000 }, async (t) => {
      const problems: string[] = [];
      const { page, frame, id } = await mounted(locale, problems);
      const bad: string[] = [];
      await shot(page, `${locale}-before`, t);
      bad.push(...(await layout(page, frame, 'before')), ...(await axe(frame, t, 'before')));

      await frame.getByRole('button', { name: s.drawSignature, exact: true }).tap();
      const pad = frame.getByRole('img', { name: s.drawSignature, exact: true });
      await pad.waitFor({ state: 'visible' });
      await touchStroke(page, pad);
      const sign = frame.getByRole('button', { name: s.sign, exact: true });
      await sign.and(frame.locator(':not([disabled])')).waitFor({ timeout: 2000 });
      await shot(page, `${locale}-drawing`, t);
      bad.push(...(await layout(page, frame, 'drawing')), ...(await axe(frame, t, 'drawing')));

      const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/sign'));
      const body = (await tapUntil(sign, posted)).postDataJSON() as { signature: { type: string; png_base64: string } };
      assert.equal(body.signature.type, 'drawn');
      const ink = await pngInk(frame, body.signature.png_base64);
      assert.ok(ink.width > 40 && ink.height > 10 && ink.ink > 200, `the drawn PNG is empty: ${JSON.stringify(ink)}`);
      await page.waitForFunction(() => (window as any).events.includes('signed'), undefined, { timeout: 10_000 });
      await frame.getByRole('heading', { name: s.signedThanks }).waitFor();
      await shot(page, `${locale}-signed`, t);
      bad.push(...(await layout(page, frame, 'signed')), ...(await axe(frame, t, 'signed')));

      assert.equal((await e.api('GET', `/v1/signing-requests/${id}`)).json.status, 'signed');
      assert.deepEqual(problems, []);
      assert.deepEqual(bad, []);
      await page.close();
    });

    test(
      `${locale}: the keyboard alone goes from the host into the frame and signs`,
      { timeout: 90_000 },
      async (t) => {
        const problems: string[] = [];
        const { page, frame, id } = await mounted(locale, problems);

        const controls = await controlsOf(frame);
        const forward = await walk(page, 'Tab');
        const backward = await walk(page, 'Shift+Tab');
        t.diagnostic(`tab order: ${forward.map((x) => x.desc).join(' → ')}`);
        for (const c of controls) {
          assert.ok(
            forward.some((x) => x.key === c),
            `Tab never reaches ${c}`,
          );
          assert.ok(
            backward.some((x) => x.key === c),
            `Shift+Tab never reaches ${c}`,
          );
        }
        assert.deepEqual([...focusProblems('Tab', forward), ...focusProblems('Shift+Tab', backward)], []);

        const typed = frame.getByLabel(s.fullName, { exact: true });
        await tabTo(page, await keyOf(page, typed));
        await page.keyboard.type('Mo Bile');
        await tabTo(page, await keyOf(page, frame.getByRole('button', { name: s.sign, exact: true })));
        await shot(page, `${locale}-keyboard-sign`, t);
        await page.keyboard.press('Enter');
        await page.waitForFunction(() => (window as any).events.includes('signed'), undefined, { timeout: 10_000 });
        assert.equal((await focusedIn(page))?.key, '#status', 'the outcome has the focus');

        const sr = await e.api('GET', `/v1/signing-requests/${id}`);
        assert.equal(sr.json.status, 'signed');
        assert.deepEqual(problems, []);
        await page.close();
      },
    );
  }
});
