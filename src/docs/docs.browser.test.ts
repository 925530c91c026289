// The API reference in Debian's Chromium, as an integrator reads it: the page renders from Signet alone (every request
// to another host is blocked and counted: none may be made), every /v1 path of the OpenAPI document is on it, the
// search finds an operation and takes the reader there, the error catalogue is readable, every webhook event is there
// with its body, and axe finds no serious problem, on a desktop and on a phone. Screenshots go to /tmp/signet-docs-*.png.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { catalogue } from '../lib/errors.js';
import { axe, launchChromium, skipWithoutChromium, watchPage } from '../testing/browser.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { EVENT_NAMES } from '../webhooks/events.js';
import { EVENTS_TAG } from './webhooks.js';

describe('API reference in Chromium', { skip: skipWithoutChromium }, () => {
  let h: Harness;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const elsewhere: string[] = [];
  const problems: string[] = [];
  let renderedMs = 0;

  before(async () => {
    h = await startHarness();
    browser = await launchChromium();
    const local = new URL(h.url('')).host;
    // Anything not for this server is refused before it leaves the browser, and remembered.
    await browser.context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.host === local) return route.continue();
      elsewhere.push(url.href);
      return route.abort('blockedbyclient');
    });
    page = await browser.context.newPage();
    // CSP refusals and failed loads are logged as console errors.
    watchPage(page, h.url('/'), problems, { inline: true });
    const started = Date.now();
    await page.goto(h.url('/docs'));
    await page.locator('.api-content h2').first().waitFor({ timeout: 30_000 });
    await page.getByRole('heading', { name: 'Mint a short-lived session', exact: false }).waitFor();
    renderedMs = Date.now() - started;
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  test('renders from Signet alone: no request to another host, no error, no CSP refusal', async (t) => {
    await page.screenshot({ path: '/tmp/signet-docs-top.png' });
    const weight = await page.evaluate(() =>
      performance.getEntriesByType('resource').map((e) => ({
        name: e.name,
        bytes: (e as PerformanceResourceTiming).encodedBodySize,
      })),
    );
    t.diagnostic(`rendered (every operation on the page) ${renderedMs} ms after navigation`);
    for (const w of weight) t.diagnostic(`${w.bytes} B ${w.name}`);
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(problems, []);
  });

  test('every /v1 path of the OpenAPI document is on the page', async () => {
    const doc = (await h.request('GET', '/v1/openapi.json')).json;
    const paths = Object.keys(doc.paths);
    assert.ok(paths.length >= 25, `${paths.length} paths`);
    const text = await page.locator('.api-content').innerText();
    assert.deepEqual(
      paths.filter((p) => !text.includes(p)),
      [],
    );
  });

  test('the search finds an operation and the reader lands on it', async () => {
    await page.getByRole('textbox', { name: 'Search' }).fill('replay');
    const hit = page.getByRole('menuitem', { name: /^post Replay a delivery/ });
    await hit.waitFor();
    await page.screenshot({ path: '/tmp/signet-docs-search.png' });
    await hit.click();
    await page.waitForURL(/#tag\/Webhooks\/paths\/~1v1~1hooks~1%7Bid%7D~1deliveries~1%7Bdelivery_id%7D~1replay\/post$/);
    const operation = page.locator(
      '[id="tag/Webhooks/paths/~1v1~1hooks~1{id}~1deliveries~1{delivery_id}~1replay/post"]',
    );
    const heading = operation.locator('h2', { hasText: 'Replay a delivery' });
    await heading.waitFor();
    // Scrolled to: the operation's heading is in the viewport.
    await page.waitForFunction(
      (el) => {
        const y = el!.getBoundingClientRect().y;
        return y >= 0 && y < window.innerHeight;
      },
      await heading.elementHandle(),
    );
    // Its path and its response example are there beside it.
    const text = await operation.innerText();
    assert.match(text, /\/v1\/hooks\/\{id\}\/deliveries\/\{delivery_id\}\/replay/);
    assert.match(text, /"delivery_id": "del_[0-9a-f]{24}"/);
    await page.screenshot({ path: '/tmp/signet-docs-operation.png' });
    await page.getByRole('textbox', { name: 'Search' }).fill('');
  });

  test('the navigation leads to the error catalogue, which lists every code', async () => {
    await page.getByRole('menuitem', { name: 'Errors', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Error codes' }).click();
    const section = page.locator('[id="section/Errors/Error-codes"]');
    await section.waitFor();
    await page.waitForURL(/#section\/Errors\/Error-codes$/);
    await page.screenshot({ path: '/tmp/signet-docs-errors.png' });
    const text = await page.locator('.api-content').innerText();
    const missing = Object.values(catalogue).filter((e) => !text.includes(e.code) || !text.includes(e.message));
    assert.deepEqual(
      missing.map((e) => e.code),
      [],
    );
  });

  test('the webhook events: every event is on the page, and the navigation leads to one with its body', async () => {
    const text = await page.locator('.api-content').innerText();
    assert.deepEqual(
      EVENT_NAMES.filter((n) => !text.includes(n)),
      [],
    );
    await page.getByRole('menuitem', { name: EVENTS_TAG, exact: true }).click();
    const item = page.getByRole('menuitem', { name: /document\.completed/ });
    await item.waitFor();
    await page.screenshot({ path: '/tmp/signet-docs-webhooks.png' });
    await item.click();
    await page.waitForURL(/#tag\/Webhook-events\/paths\/document\.completed\/post$/);
    const event = page.locator('[id="tag/Webhook-events/paths/document.completed/post"]');
    await event.locator('h2', { hasText: 'document.completed' }).waitFor();
    // Its headers, its fields and its example body are there beside it.
    const shown = await event.innerText();
    for (const s of ['X-Service-Signature', 'X-Legacy-Event', 'signed_pdf_url', 'tsa_signed_at', 'EventSignerRef'])
      assert.ok(shown.includes(s), s);
    assert.match(shown, /"event": "document\.completed"/);
    await page.screenshot({ path: '/tmp/signet-docs-event.png' });
  });

  test('axe finds no serious or critical problem', async (t) => {
    assert.deepEqual(await axe(page, t, 'docs'), []);
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(problems, []);
  });

  test('on a phone (360×740) nothing scrolls sideways, the catalogue table takes focus, and axe is clean', async (t) => {
    const phone = await launchChromium({ phone: true });
    try {
      const p = await phone.context.newPage();
      await p.goto(h.url('/docs'));
      await p.getByRole('heading', { name: 'Webhook deliveries' }).waitFor({ timeout: 30_000 });
      // The catalogue is wider than the phone: it scrolls inside itself, and the keyboard can reach it to do so.
      const table = p.locator('.redoc-markdown table').first();
      await table.waitFor();
      assert.deepEqual(await table.evaluate((el) => [el.scrollWidth > el.clientWidth, (el as HTMLElement).tabIndex]), [
        true,
        0,
      ]);
      assert.equal(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true);
      await p.screenshot({ path: '/tmp/signet-docs-phone.png' });
      assert.deepEqual(await axe(p, t, 'docs-phone'), []);
    } finally {
      await phone.close();
    }
  });
});
