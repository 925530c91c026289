// Embedded signing in Debian's Chromium, as an integrator's page uses it. Signet runs for real on a loopback port
// with BASE_URL https://signet.test; Playwright routes that origin to it (route.fetch: the real responses and
// headers, which the browser enforces), and serves the host pages on https origins. A registered host mounts a
// session with signet.js and signs inside the frame; an unregistered origin's frame is blocked by the browser; an
// expired session shows its ended page and posts `expired`; a message forged by another frame is ignored.
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { setAllowedOrigins } from '../keys/keys.repo.js';
import { axe, launchChromium, skipWithoutChromium } from '../testing/browser.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';

const SIGNET = 'https://signet.test';
const HOST = 'https://portal.example';
const EVIL = 'https://evil.example';
const SHOTS = os.tmpdir();

/** The integrator's page: signet.js from Signet, the session mounted in #signing, every callback recorded. */
const hostPage = (sessionUrl: string, forge: boolean) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme portal</title>
<script src="${SIGNET}/embed/signet.js"></script>
<style>body{font:16px system-ui;margin:0;background:#f3f4f6}header{background:#1f2937;color:#fff;padding:12px 24px}
main{max-width:1100px;margin:24px auto;background:#fff;padding:16px;border-radius:8px}</style></head>
<body><header>Acme customer portal</header><main><h1>Sign your contract</h1><div id="signing"></div>
${forge ? `<iframe id="forger" src="${EVIL}/forger" title="ad" style="width:10px;height:10px"></iframe>` : ''}
</main>
<script>
window.events = [];
const record = (name) => (m) => window.events.push({ callback: name, message: m });
window.mounted = Signet.mount(document.getElementById('signing'), ${JSON.stringify(sessionUrl)}, {
  onReady: record('onReady'), onViewed: record('onViewed'), onSigned: record('onSigned'),
  onDeclined: record('onDeclined'), onExpired: record('onExpired'), onError: record('onError'),
});
</script></body></html>`;

/** A third party's frame on the host page posting a perfectly shaped `signed` for the real session. */
const forgerPage = (session: { id: string; signing_request_id: string }) => `<!doctype html><html><body><script>
const m = { source: 'signet', version: 1, type: 'signed', session_id: ${JSON.stringify(session.id)},
  signing_request_id: ${JSON.stringify(session.signing_request_id)}, data: {} };
window.forge = () => { parent.postMessage(m, '*'); parent.postMessage({ ...m, type: 'error', data: { code: 'x' } }, '*'); };
</script></body></html>`;

type Recorded = { callback: string; message: Record<string, any> };
const eventsOf = (page: Page) => page.evaluate(() => (window as any).events as Recorded[]);

async function waitForCallback(page: Page, callback: string, timeoutMs = 20_000): Promise<Recorded> {
  await page.waitForFunction((c) => (window as any).events?.some((e: Recorded) => e.callback === c), callback, {
    timeout: timeoutMs,
  });
  return (await eventsOf(page)).find((e) => e.callback === callback)!;
}

describe('embedded signing in Chromium', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let context: BrowserContext;
  const pages = new Map<string, string>();

  before(async () => {
    e = await startE2E({ tier: 'enterprise', env: { BASE_URL: SIGNET } });
    const key = await e.h.db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('workspace_id', '=', e.workspaceId)
      .executeTakeFirstOrThrow();
    await setAllowedOrigins(e.h.db.kysely, key.id, [HOST]);
    browser = await launchChromium();
    context = browser.context;
    // Signet's origin goes to the real server; the response (status, headers, body) is the server's own.
    await context.route(`${SIGNET}/**`, async (route) => {
      const u = new URL(route.request().url());
      const response = await route.fetch({ url: e.h.url(u.pathname + u.search), maxRedirects: 0 });
      await route.fulfill({ response });
    });
    for (const origin of [HOST, EVIL]) {
      await context.route(`${origin}/**`, async (route) => {
        const u = new URL(route.request().url());
        const body = pages.get(`${u.origin}${u.pathname}`);
        await route.fulfill(
          body === undefined
            ? { status: 404, body: 'not found' }
            : { status: 200, contentType: 'text/html; charset=utf-8', body },
        );
      });
    }
  });
  after(async () => {
    await browser?.close();
    await e?.close();
  });

  async function session(ttl = 600, locale = 'en') {
    const r = await e.api('POST', '/v1/signing-requests', {
      signers: [
        { role: 'client', email: `c.${Math.random().toString(36).slice(2, 8)}@example.com`, name: 'Cleo Client' },
      ],
      file: { name: 'contract.pdf', content_base64: b64(await makePdf({ pages: 1, text: [['Service contract']] })) },
      placement: 'auto_append',
      title: 'Service contract',
    });
    assert.equal(r.status, 201, r.text);
    const id = r.json.signing_requests[0].id as string;
    const s = await e.api('POST', '/v1/embedded/sign-sessions', {
      signing_request_id: id,
      origin: HOST,
      ttl_seconds: ttl,
      locale,
    });
    assert.equal(s.status, 201, s.text);
    assert.ok(s.json.url.startsWith(`${SIGNET}/embed/sign/`), s.json.url);
    return s.json as { id: string; url: string; signing_request_id: string };
  }

  function watch(page: Page, problems: string[]) {
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
  }

  test('a registered host mounts the session, signs inside the frame, and hears ready then signed', async (t) => {
    const s = await session();
    pages.set(`${HOST}/sign`, hostPage(s.url, true));
    pages.set(`${EVIL}/forger`, forgerPage(s));
    const page = await context.newPage();
    const problems: string[] = [];
    watch(page, problems);
    await page.goto(`${HOST}/sign`);

    const ready = await waitForCallback(page, 'onReady');
    assert.deepEqual(
      { ...ready.message, data: undefined },
      {
        source: 'signet',
        version: 1,
        type: 'ready',
        session_id: s.id,
        signing_request_id: s.signing_request_id,
        data: undefined,
      },
    );
    await waitForCallback(page, 'onViewed');

    // Another frame on the host page forges an outcome for this very session: the helper ignores it.
    const forger = page.frames().find((f) => f.url() === `${EVIL}/forger`)!;
    await forger.evaluate(() => (window as any).forge());
    await page.waitForTimeout(300);
    assert.deepEqual(
      (await eventsOf(page)).map((x) => x.callback).filter((c) => c === 'onSigned' || c === 'onError'),
      [],
      'a forged message reached a callback',
    );

    // The frame grew to its page (resize): no scrollbar inside the frame.
    const iframe = page.locator('#signing iframe');
    const frameHeight = await iframe.evaluate((el) => el.getBoundingClientRect().height);
    assert.ok(frameHeight > 600, `frame height ${frameHeight}`);
    const frame = page.frameLocator('#signing iframe');
    t.diagnostic(`frame resized to ${frameHeight}px`);
    // A viewport as tall as the page, so the screenshot shows the frame as painted (fullPage may not repaint it).
    await page.setViewportSize({ width: 1280, height: Math.ceil(frameHeight) + 200 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SHOTS, 'signet-embed-host.png') });
    const inner = page.frames().find((f) => f.url().startsWith(`${SIGNET}/embed/sign/`))!;
    const serious = await axe(inner, t, 'embed page');

    await frame.locator('#signature-typed').fill('Cleo Client');
    await frame.locator('#sign-button').click();
    const signed = await waitForCallback(page, 'onSigned');
    assert.equal(signed.message.type, 'signed');
    assert.equal(signed.message.session_id, s.id);
    assert.equal(signed.message.signing_request_id, s.signing_request_id);
    // The server had it before the host heard it.
    const sr = await e.api('GET', `/v1/signing-requests/${s.signing_request_id}`);
    assert.equal(sr.json.status, 'signed');
    await frame.locator('#status[data-state="signed"]').waitFor();
    // The frame shrank to the thank-you message.
    await page.waitForFunction(
      () => document.querySelector('#signing iframe')!.getBoundingClientRect().height < 600,
      undefined,
      { timeout: 5000 },
    );
    await page.screenshot({ path: path.join(SHOTS, 'signet-embed-signed.png') });

    const order = (await eventsOf(page)).map((x) => x.callback);
    assert.deepEqual(order, ['onReady', 'onViewed', 'onSigned'], 'callbacks in order, each once');
    await e.work();
    assert.equal(
      e.eventsOf('signing_request.signed').filter((x) => x.signing_request_id === s.signing_request_id).length,
      1,
    );
    assert.deepEqual(serious, []);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('an unregistered origin cannot frame the session: the browser blocks it', async () => {
    const s = await session();
    pages.set(
      `${EVIL}/steal`,
      `<!doctype html><html><body><iframe id="f" src="${s.url}" title="x"></iframe></body></html>`,
    );
    const page = await context.newPage();
    const blocked = new Promise<string>((resolve) =>
      page.on('console', (m) => {
        if (/frame-ancestors/.test(m.text())) resolve(m.text());
      }),
    );
    await page.goto(`${EVIL}/steal`);
    const message = await Promise.race([blocked, new Promise<string>((r) => setTimeout(() => r(''), 10_000))]);
    assert.match(message, /frame-ancestors/, 'Chromium reports the CSP refusal');
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    const rendered = await frame.evaluate(() => document.querySelector('#sign-form') !== null).catch(() => false);
    assert.equal(rendered, false, 'the signing page did not render in the unregistered frame');
    const sr = await e.api('GET', `/v1/signing-requests/${s.signing_request_id}`);
    assert.equal(sr.json.status, 'pending', 'nothing was viewed');
    await page.close();
  });

  test('an expired session shows the ended page and posts expired', async (t) => {
    const s = await session(60, 'de');
    e.h.clock.advance(61_000);
    pages.set(`${HOST}/late`, hostPage(s.url, false));
    const page = await context.newPage();
    const problems: string[] = [];
    watch(page, problems);
    await page.goto(`${HOST}/late`);
    const expired = await waitForCallback(page, 'onExpired');
    assert.equal(expired.message.session_id, s.id);
    const frame = page.frameLocator('#signing iframe');
    await frame.getByRole('heading', { name: 'Diese Signatursitzung ist beendet.' }).waitFor();
    assert.equal(await frame.locator('#sign-form').count(), 0);
    await page.screenshot({ path: path.join(SHOTS, 'signet-embed-expired.png'), fullPage: true });
    const inner = page.frames().find((f) => f.url().startsWith(`${SIGNET}/embed/sign/`))!;
    assert.deepEqual(await axe(inner, t, 'ended page'), []);
    assert.deepEqual(
      (await eventsOf(page)).map((x) => x.callback),
      ['onExpired'],
    );
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a session ending while the signer is on the page ends the page and posts expired once', async () => {
    const s = await session(60);
    e.h.clock.advance(57_000); // 3 s of the session left when the page loads
    pages.set(`${HOST}/slow`, hostPage(s.url, false));
    const page = await context.newPage();
    await page.goto(`${HOST}/slow`);
    await waitForCallback(page, 'onReady');
    const expired = await waitForCallback(page, 'onExpired', 10_000);
    assert.equal(expired.message.signing_request_id, s.signing_request_id);
    const frame = page.frameLocator('#signing iframe');
    await frame.locator('#status[data-state="expired"]').waitFor();
    assert.equal(await frame.locator('#sign-form').isVisible(), false);
    // The server agrees: the session can no longer act.
    e.h.clock.advance(3_000);
    const token = new URL(s.url).pathname.split('/').pop()!;
    const r = await e.h.request('POST', `/embed/sign/${token}/sign`, {
      body: { signature: { type: 'typed', text: 'Too late' } },
    });
    assert.equal(r.status, 409);
    assert.equal(r.json.meta.state, 'session_expired');
    await page.waitForTimeout(300);
    assert.deepEqual(
      (await eventsOf(page)).map((x) => x.callback).filter((c) => c !== 'onViewed'),
      ['onReady', 'onExpired'],
    );
    await page.close();
  });
});
