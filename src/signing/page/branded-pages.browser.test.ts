// A workspace's brand on the pages a signer or reviewer sees (issue 27), in Debian's Chromium against the real app,
// with a light and a dark accent: the gate, signer, signed, copy, review (JavaScript on and off), embed and /verify pages
// show the logo (loaded from the logo route, alt text = the workspace's name), the accent on their buttons, links and
// header line, and Signet named as the service; axe finds nothing serious or critical; the CSP lets all of it load
// with no console error; screenshots at 1280 px and 360×740 go to /tmp/shots-brand-applied. Before the brand, the
// same pages carry none of it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { setAllowedOrigins } from '../../keys/keys.repo.js';
import { axe, launchChromium, openInTab, PHONE, skipWithoutChromium, watchPage } from '../../testing/browser.js';
import { layoutProblems } from '../../testing/mobile.js';
import { logoPng, setBrand } from '../../testing/brand.js';
import { startE2E, type E2E } from '../../testing/e2e.js';
import { templateBody, VALUES } from '../../templates/testing/fixtures.js';
import { plainPdf } from '../testing/requests.js';

const HOST = 'https://portal.example';
const SHOTS = '/tmp/shots-brand-applied';
const WORKSPACE = 'Test Workspace';
const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;
/** On a phone: no sideways scrolling, nothing spilling out of its box, tap targets of 44 px (the fields excepted). */
const phoneLayout = (page: Page, label: string) =>
  layoutProblems(page, label, { exempt: '.fields', maxWidth: PHONE.width, contained: '.page-wrap, .panel, table' });
const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;

describe('branded pages in Chromium: logo, accent, "via Signet", axe', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let desktop: Awaited<ReturnType<typeof launchChromium>>;
  let phone: Awaited<ReturnType<typeof launchChromium>>;
  let noScript: Awaited<ReturnType<typeof launchChromium>>;
  let tplId: string;
  before(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    e = await startE2E({ tier: 'enterprise' });
    const key = await e.h.db.kysely
      .selectFrom('api_keys')
      .select('id')
      .where('workspace_id', '=', e.workspaceId)
      .executeTakeFirstOrThrow();
    await setAllowedOrigins(e.h.db.kysely, key.id, [HOST]);
    const tpl = await e.api('POST', '/v1/templates', await templateBody('Services agreement'));
    assert.equal(tpl.status, 201, tpl.text);
    tplId = tpl.json.id;
    [desktop, phone, noScript] = await Promise.all([
      launchChromium(),
      launchChromium({ phone: true }),
      launchChromium({ javaScriptEnabled: false }),
    ]);
  });
  after(async () => {
    await Promise.all([desktop?.close(), phone?.close(), noScript?.close()]);
    await e?.close();
  });

  /** A signing request to a fresh signer; its link (mailed) and ids. */
  async function request(o: { verification?: string } = {}) {
    const to = email('signer');
    const r = await e.api('POST', '/v1/signing-requests', {
      title: 'Service agreement',
      placement: 'auto_append',
      file: { name: 'agreement.pdf', content_base64: await plainPdf(1) },
      signers: [{ role: 'client', name: 'Ada Lovelace', email: to, ...o }],
    });
    assert.equal(r.status, 201, r.text);
    await e.work();
    return {
      to,
      link: `/sign/${await e.linkFor(to)}`,
      id: r.json.signing_requests[0].id as string,
      doc: r.json.document_id,
    };
  }

  async function staged() {
    const r = await e.api('POST', `/v1/templates/${tplId}/instantiate`, {
      recipients: [
        { slot: 'client', name: 'Client Person', email: email('client') },
        { slot: 'provider', name: 'Provider Person', email: email('provider') },
      ],
      field_values: VALUES,
      review: true,
    });
    assert.equal(r.status, 201, r.text);
    return new URL(r.json.template_instance.review_url).pathname;
  }

  // What the tabs saw, for the test running now (each test starts with an empty list).
  const problems: string[] = [];
  async function open(context: BrowserContext, url: string): Promise<Page> {
    const { page, response: res } = await openInTab(context, e.h.url(url), problems, (tab, sink) =>
      // A style or image the CSP refused shows up as a console error.
      watchPage(tab, e.h.url('/'), sink, { inline: true }),
    );
    assert.equal(res?.status(), 200, `${url}: ${res?.status()}`);
    return page;
  }

  /** What the brand looks like on the page now: the logo, "via", the accent's use; and axe's serious findings. */
  async function judge(
    page: Page,
    label: string,
    accent: string,
    button: string | null,
    t: { diagnostic(m: string): void },
  ) {
    const logo = page.locator('img.brand-logo, img.sender-logo').first();
    await logo.waitFor({ timeout: 10_000 });
    const seen = await page.evaluate(
      ([sel]) => {
        const img = document.querySelector<HTMLImageElement>('img.brand-logo, img.sender-logo')!;
        const b = sel ? document.querySelector<HTMLElement>(sel) : null;
        return {
          alt: img.alt,
          src: new URL(img.src).pathname,
          loaded: img.complete && img.naturalWidth > 0,
          via: document.querySelector('.via-service')?.textContent ?? null,
          primary: getComputedStyle(document.documentElement).getPropertyValue('--primary').trim(),
          button: b ? getComputedStyle(b).backgroundColor : null,
        };
      },
      [button],
    );
    assert.equal(seen.alt, WORKSPACE, `${label}: alt text`);
    assert.match(seen.src, /^\/brand\/ws_[0-9a-f]+\/logo\/[0-9a-f]{16}$/, `${label}: logo route`);
    assert.ok(seen.loaded, `${label}: the logo loaded`);
    assert.equal(seen.via, 'via Signet', `${label}: Signet named as the service`);
    assert.equal(seen.primary, accent, `${label}: --primary`);
    if (button) assert.equal(seen.button, rgb(accent), `${label}: ${button} in the accent`);
    return axe(page, t, label);
  }

  /** Without JavaScript (nothing can be evaluated in the page): the logo and "via Signet" are there and shown. */
  async function judgeStatic(page: Page, label: string) {
    const logo = page.locator('img.brand-logo, img.sender-logo').first();
    assert.ok(await logo.isVisible(), `${label}: the logo is shown`);
    assert.equal(await logo.getAttribute('alt'), WORKSPACE, `${label}: alt text`);
    assert.equal((await page.locator('.via-service').first().textContent())?.trim(), 'via Signet', `${label}: via`);
  }

  async function shoot(page: Page, name: string) {
    const file = path.join(SHOTS, `${name}.png`);
    await page.screenshot({ path: file, fullPage: false });
    return file;
  }

  test('before a brand: no logo, no style element, no "via", pages as they were', async () => {
    const { link } = await request();
    const review = await staged();
    for (const url of [link, review]) {
      const r = await e.h.request('GET', url);
      assert.equal(r.status, 200);
      assert.doesNotMatch(r.text, /<style|brand-logo|via-service|branded|\/brand\//, url);
    }
  });

  for (const accent of ['#1a5fb4', '#1b1b1b']) {
    test(`accent ${accent}: gate, signer, signed, review, embed and verify pages`, { timeout: 120_000 }, async (t) => {
      await setBrand(e.h, e.workspaceId, { color: accent, logo: logoPng() });
      const tag = accent.slice(1);
      const bad: string[] = [];
      problems.length = 0;
      const shots: string[] = [];

      // The gate of a request that asks for a code (a plain form page).
      const gated = await request({ verification: 'email_code' });
      let page = await open(desktop.context, gated.link);
      assert.equal(await page.locator('body').getAttribute('data-state'), 'verification');
      bad.push(...(await judge(page, 'gate', accent, '.gate-form .button.primary', t)));
      shots.push(await shoot(page, `${tag}-gate-desktop`));

      // The signer page at 1280 px and on a phone, then signed.
      const { link, doc, to } = await request();
      for (const [ctx, size] of [
        [phone.context, 'phone'],
        [desktop.context, 'desktop'],
      ] as const) {
        page = await open(ctx, link);
        await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
        await page.locator('#signature-typed').fill('Ada Lovelace');
        await page.locator('#sign-button:not([disabled])').waitFor();
        bad.push(...(await judge(page, `signer ${size}`, accent, '#sign-button', t)));
        if (size === 'phone') bad.push(...(await phoneLayout(page, 'signer phone')));
        shots.push(await shoot(page, `${tag}-signer-${size}`));
      }
      await page.locator('#sign-button').click();
      await page.locator('#status[data-state="signed"]').waitFor({ timeout: 10_000 });
      await e.work();
      await page.reload();
      assert.equal(await page.locator('body').getAttribute('data-state'), 'signed');
      bad.push(...(await judge(page, 'signed', accent, '.result-link .button.primary', t)));
      shots.push(await shoot(page, `${tag}-signed-desktop`));

      // The signer's copy, from the completion mail (a page without script or form).
      const done = e.smtp.received.filter((m) => m.to.includes(to)).map((m) => m.raw.toString('latin1'));
      const copy = done.map((raw) => /\/copy\/([A-Za-z0-9_-]{43})/.exec(raw)?.[0]).find(Boolean);
      assert.ok(copy, 'the completion mail carries the copy link');
      page = await open(desktop.context, copy);
      bad.push(...(await judge(page, 'copy', accent, '.downloads .button.primary', t)));
      shots.push(await shoot(page, `${tag}-copy-desktop`));

      // The review page: with JavaScript at both sizes, and without (its forms work alone).
      const review = await staged();
      for (const [ctx, size] of [
        [desktop.context, 'desktop'],
        [phone.context, 'phone'],
        [noScript.context, 'noscript'],
      ] as const) {
        page = await open(ctx, review);
        if (size === 'noscript') await judgeStatic(page, 'review without JavaScript');
        else {
          await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
          bad.push(...(await judge(page, `review ${size}`, accent, '#confirm-button', t)));
          if (size === 'phone') bad.push(...(await phoneLayout(page, 'review phone')));
        }
        shots.push(await shoot(page, `${tag}-review-${size}`));
      }
      await Promise.all([page.waitForURL(e.h.url(review)), page.locator('#confirm-button').click()]);
      await page.locator('body[data-state="confirmed"]').waitFor({ timeout: 10_000 });
      await judgeStatic(page, 'review confirmed without JavaScript');

      // The embed page, opened at the top (a frame adds nothing to its own markup).
      const framed = await request();
      const session = await e.api('POST', '/v1/embedded/sign-sessions', {
        signing_request_id: framed.id,
        origin: HOST,
        locale: 'en',
        ttl_seconds: 600,
      });
      assert.equal(session.status, 201, session.text);
      for (const [ctx, size] of [
        [desktop.context, 'desktop'],
        [phone.context, 'phone'],
      ] as const) {
        page = await open(ctx, new URL(session.json.url).pathname);
        await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
        await page.locator('#signature-typed').fill('Ada Lovelace');
        bad.push(...(await judge(page, `embed ${size}`, accent, '#sign-button', t)));
        if (size === 'phone') bad.push(...(await phoneLayout(page, 'embed phone')));
        shots.push(await shoot(page, `${tag}-embed-${size}`));
      }

      // /verify with the sealed file: a plain form, so once without JavaScript, and at both sizes with it for axe.
      const signed = await e.h.app.inject({
        method: 'GET',
        url: `/v1/documents/${doc}/signed`,
        headers: { authorization: `Bearer ${e.token}` },
      });
      assert.equal(signed.statusCode, 200, signed.body);
      for (const [ctx, size] of [
        [noScript.context, 'noscript'],
        [desktop.context, 'desktop'],
        [phone.context, 'phone'],
      ] as const) {
        page = await open(ctx, '/verify');
        await page.locator('#file').setInputFiles({
          name: 'signed.pdf',
          mimeType: 'application/pdf',
          buffer: Buffer.from(signed.rawPayload),
        });
        await page.locator('form.upload button[type="submit"]').click();
        await page.locator('#verdict[data-verdict="valid"]').waitFor({ timeout: 15_000 });
        if (size === 'noscript') {
          await judgeStatic(page, 'verify without JavaScript');
          continue;
        }
        const link = await page.evaluate(() => getComputedStyle(document.querySelector('main.verify > p > a')!).color);
        assert.equal(link, rgb(accent), 'verify: the link in the accent (the CSP let the style in)');
        bad.push(...(await judge(page, `verify ${size}`, accent, null, t)));
        shots.push(await shoot(page, `${tag}-verify-${size}`));
      }

      t.diagnostic(`screenshots: ${shots.join(' ')}`);
      assert.deepEqual(problems, [], 'no script, CSP or network problems');
      assert.deepEqual(bad, [], `accent ${accent}: axe and the phone's layout`);
    });
  }
});
