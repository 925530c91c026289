// The signer page on a 360×740 phone with touch, and with the keyboard alone, in Debian's Chromium against the real
// app: one signer draws with a finger and signs, another reaches every control with Tab and Shift+Tab (visible focus,
// nothing covering it), opens and cancels the decline form (the focus comes back), gets from the drawing pad to the
// typed signature with Enter, and signs with Enter. No sideways scrolling, 44-px tap targets, axe without serious
// violations. Controls are found by their names in the page's own catalogue, so the test runs in any language.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { strings, type Locale } from '../../i18n/i18n.js';
import { axe, launchChromium, PHONE, skipWithoutChromium } from '../../testing/browser.js';
import { b64, startE2E, type E2E } from '../../testing/e2e.js';
import {
  controlsOf,
  focusedIn,
  focusProblems,
  keyOf,
  layoutProblems,
  openViewerPage,
  pngInk,
  screenshotsIn,
  tabTo,
  tapUntil,
  touchStroke,
  walk,
} from '../../testing/mobile.js';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';

/** The languages the page is checked in; each runs the same steps, finding controls by the catalogue's words. */
const LOCALES: readonly Locale[] = ['en', 'ja', 'ar'];
/** The fields laid over the PDF follow the document's scale; the panel offers the same actions at full size. */
const OVERLAY = '.fields';
/** What must fit its container at 360 px: the PDF's pages, the signing panel, the outcome. */
const CONTAINED = '.page-wrap, .panel, .status';
const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-signer-mobile-'));

describe('the signer page on a phone and with the keyboard alone', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let phone: Awaited<ReturnType<typeof launchChromium>>;
  before(async () => {
    e = await startE2E();
    phone = await launchChromium({ phone: true });
  });
  after(async () => {
    await phone?.close();
    await e?.close();
  });

  /** A two-page request in `locale` for one new signer; returns the signer's page path and request id. */
  async function request(locale: Locale, name: string) {
    const email = `s.${Math.random().toString(36).slice(2, 8)}@example.com`;
    const pdf = await makePdf({
      pages: 2,
      text: [['Service agreement', '1. Scope.', '2. Fees.'], ['3. Term.']],
    });
    const r = await e.api('POST', '/v1/signing-requests', {
      title: 'Service agreement',
      locale,
      placement: 'auto_append',
      file: { name: 'agreement.pdf', content_base64: b64(pdf) },
      signers: [{ role: 'client', name, email }],
    });
    assert.equal(r.status, 201, r.text);
    await e.work();
    return { path: `/sign/${await e.linkFor(email)}`, id: r.json.signing_requests[0].id as string };
  }

  const open = (url: string, problems: string[]) => openViewerPage(phone.context, url, problems);
  const shot = screenshotsIn(SHOTS);

  for (const locale of LOCALES) {
    const s = strings(locale, 'page');

    test(`${locale}: a finger draws the signature and signs`, { timeout: 90_000 }, async (t) => {
      const { path: link, id } = await request(locale, 'Tao Touch');
      const problems: string[] = [];
      const bad: string[] = [];
      const page = await open(e.h.url(link), problems);

      // The PDF fits the width; the page does not scroll sideways; every control is big enough for a finger.
      const sheet = (await page.locator('[data-page="1"]').boundingBox())!;
      assert.ok(sheet.x >= 0 && sheet.x + sheet.width <= PHONE.width, `page 1 overflows: ${JSON.stringify(sheet)}`);
      assert.ok(sheet.width >= PHONE.width * 0.85, `page 1 is needlessly narrow: ${sheet.width}px`);
      await shot(page, `${locale}-before`, t);
      bad.push(
        ...(await layoutProblems(page, 'before', { exempt: OVERLAY, maxWidth: PHONE.width, contained: CONTAINED })),
      );
      bad.push(...(await axe(page, t, 'before')));

      await page.getByRole('button', { name: s.drawSignature, exact: true }).tap();
      const pad = page.getByRole('img', { name: s.drawSignature, exact: true });
      await pad.waitFor({ state: 'visible' });
      assert.equal(await pad.evaluate((el) => getComputedStyle(el).touchAction), 'none', 'the pad keeps its touches');
      const sign = page.getByRole('button', { name: s.sign, exact: true });
      assert.equal(await sign.isDisabled(), true, 'Sign is enabled before anything is drawn');
      await touchStroke(page, pad);
      await sign.and(page.locator(':not([disabled])')).waitFor({ timeout: 2000 });
      // The stroke shows in the document's signature box before signing.
      assert.equal((await page.locator('.field-signature img').count()) > 0, true, 'no preview of the drawing');
      await shot(page, `${locale}-drawing`, t);
      bad.push(
        ...(await layoutProblems(page, 'drawing', { exempt: OVERLAY, maxWidth: PHONE.width, contained: CONTAINED })),
      );
      bad.push(...(await axe(page, t, 'drawing')));

      const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/sign'));
      const body = (await tapUntil(sign, posted)).postDataJSON() as { signature: { type: string; png_base64: string } };
      assert.equal(body.signature.type, 'drawn');
      const ink = await pngInk(page, body.signature.png_base64);
      assert.ok(ink.width > 40 && ink.height > 10 && ink.ink > 200, `the drawn PNG is empty: ${JSON.stringify(ink)}`);
      await page.getByRole('heading', { name: s.signedThanks }).waitFor({ timeout: 10_000 });
      await shot(page, `${locale}-signed`, t);
      bad.push(...(await layoutProblems(page, 'signed', { maxWidth: PHONE.width, contained: CONTAINED })));
      bad.push(...(await axe(page, t, 'signed')));

      const sr = await e.api('GET', `/v1/signing-requests/${id}`);
      assert.equal(sr.json.status, 'signed', sr.text);
      assert.deepEqual(problems, []);
      assert.deepEqual(bad, []);
    });

    test(`${locale}: the keyboard alone reaches every control and signs`, { timeout: 90_000 }, async (t) => {
      const { path: link, id } = await request(locale, 'Kim Keys');
      const problems: string[] = [];
      const page = await open(e.h.url(link), problems);

      // Forwards and backwards, every visible control is reached, its focus visible and not covered.
      const controls = await controlsOf(page);
      const forward = await walk(page, 'Tab');
      const backward = await walk(page, 'Shift+Tab');
      t.diagnostic(`tab order: ${forward.map((x) => x.desc).join(' → ')}`);
      const keys = (stops: typeof forward) => stops.map((x) => x.key);
      for (const c of controls) {
        assert.ok(keys(forward).includes(c), `Tab never reaches ${c}`);
        assert.ok(keys(backward).includes(c), `Shift+Tab never reaches ${c}`);
      }
      assert.deepEqual([...focusProblems('Tab', forward), ...focusProblems('Shift+Tab', backward)], []);

      // The drawing pad has a keyboard way out: Enter on it switches to the typed signature.
      const drawMode = page.getByRole('button', { name: s.drawSignature, exact: true });
      await tabTo(page, await keyOf(page, drawMode));
      await page.keyboard.press('Space');
      assert.equal(await drawMode.getAttribute('aria-pressed'), 'true');
      const pad = page.getByRole('img', { name: s.drawSignature, exact: true });
      await tabTo(page, await keyOf(page, pad));
      assert.deepEqual(focusProblems('pad', [(await focusedIn(page))!]), []);
      await shot(page, `${locale}-keyboard-pad`, t);
      await page.keyboard.press('Enter');
      const typed = page.getByLabel(s.fullName, { exact: true });
      assert.equal(
        (await focusedIn(page))?.key,
        await keyOf(page, typed),
        'Enter on the pad goes to the typed signature',
      );
      assert.equal(
        await page.getByRole('button', { name: s.typeSignature, exact: true }).getAttribute('aria-pressed'),
        'true',
      );
      await page.keyboard.type('Kim Keys');

      // The decline form opens on Enter with the focus in it, and Cancel (Space) gives the focus back.
      const declineButton = page.getByRole('button', { name: s.decline, exact: true });
      await tabTo(page, await keyOf(page, declineButton));
      await page.keyboard.press('Enter');
      const reason = page.getByLabel(s.declineReason, { exact: true });
      assert.equal((await focusedIn(page))?.key, await keyOf(page, reason), 'the reason field has the focus');
      await page.keyboard.press('Tab');
      const cancel = page.getByRole('button', { name: s.cancel, exact: true });
      assert.equal((await focusedIn(page))?.key, await keyOf(page, cancel));
      await shot(page, `${locale}-keyboard-decline`, t);
      const serious = await axe(page, t, 'decline open');
      await page.keyboard.press('Space');
      assert.equal(await reason.isVisible(), false, 'Cancel closes the decline form');
      assert.equal((await focusedIn(page))?.key, await keyOf(page, declineButton), 'the focus is back on Decline');

      // Sign with Enter; the outcome takes the focus.
      await tabTo(page, await keyOf(page, page.getByRole('button', { name: s.sign, exact: true })), true);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: s.signedThanks }).waitFor({ timeout: 10_000 });
      assert.equal((await focusedIn(page))?.key, '#status', 'the outcome has the focus');
      await shot(page, `${locale}-keyboard-signed`, t);

      const sr = await e.api('GET', `/v1/signing-requests/${id}`);
      assert.equal(sr.json.status, 'signed', sr.text);
      assert.deepEqual(serious, []);
      assert.deepEqual(problems, []);
    });
  }
});
