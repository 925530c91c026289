// The review page on a 360×740 phone with touch, and with the keyboard alone, in Debian's Chromium against the real
// app: one staged instance is confirmed with taps (after opening and closing the discard disclosure), another is
// walked with Tab and Shift+Tab (every control reached, focus visible and uncovered), its disclosure opened with
// Enter (the focus moves in) and closed again (the focus stays on it), and discarded with Enter. No sideways
// scrolling, 44-px tap targets, axe without serious violations. Controls are found by the catalogue's words.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { strings, type Locale } from '../../i18n/i18n.js';
import { axe, launchChromium, PHONE, skipWithoutChromium } from '../../testing/browser.js';
import { startE2E, type E2E } from '../../testing/e2e.js';
import {
  controlsOf,
  focusedIn,
  focusProblems,
  keyOf,
  layoutProblems,
  openViewerPage,
  screenshotsIn,
  tabTo,
  waitForFocus,
  walk,
} from '../../testing/mobile.js';
import { templateBody, VALUES } from '../testing/fixtures.js';

/** The languages the page is checked in; each runs the same steps, finding controls by the catalogue's words. */
const LOCALES: readonly Locale[] = ['en', 'ja', 'ar'];
/** What must fit its container at 360 px: the tables, and the PDF's pages in the viewer. */
const CONTAINED = 'table, .page-wrap';
const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-review-mobile-'));

describe('the review page on a phone and with the keyboard alone', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let phone: Awaited<ReturnType<typeof launchChromium>>;
  let tplId: string;
  before(async () => {
    e = await startE2E({ tier: 'enterprise' });
    phone = await launchChromium({ phone: true });
    const created = await e.api('POST', '/v1/templates', await templateBody('Services agreement'));
    assert.equal(created.status, 201, created.text);
    tplId = created.json.id;
  });
  after(async () => {
    await phone?.close();
    await e?.close();
  });

  /** A staged instance in `locale` for two recipients with long addresses (the tables must still fit). */
  async function stage(locale: Locale) {
    const tag = Math.random().toString(36).slice(2, 8);
    const r = await e.api('POST', `/v1/templates/${tplId}/instantiate`, {
      recipients: [
        { slot: 'client', name: 'Client Person', email: `client.with.a.long.address.${tag}@example.com` },
        { slot: 'provider', name: 'Provider Person', email: `provider.${tag}@example.com` },
      ],
      field_values: VALUES,
      review: true,
      locale,
    });
    assert.equal(r.status, 201, r.text);
    const ti = r.json.template_instance;
    return { id: ti.id as string, path: new URL(ti.review_url).pathname };
  }

  const open = (url: string, problems: string[]) => openViewerPage(phone.context, url, problems);
  const shot = screenshotsIn(SHOTS);

  for (const locale of LOCALES) {
    const s = strings(locale, 'review');

    test(`${locale}: taps open and close the discard disclosure, then confirm`, { timeout: 90_000 }, async (t) => {
      const a = await stage(locale);
      const problems: string[] = [];
      const bad: string[] = [];
      const page = await open(e.h.url(a.path), problems);

      const sheet = (await page.locator('[data-page="1"]').boundingBox())!;
      assert.ok(sheet.x >= 0 && sheet.x + sheet.width <= PHONE.width, `page 1 overflows: ${JSON.stringify(sheet)}`);
      assert.ok(sheet.width >= PHONE.width * 0.85, `page 1 is needlessly narrow: ${sheet.width}px`);
      await shot(page, `${locale}-staged`, t);
      bad.push(...(await layoutProblems(page, 'staged', { maxWidth: PHONE.width, contained: CONTAINED })));
      bad.push(...(await axe(page, t, 'staged')));

      const discard = page.getByText(s.discard, { exact: true });
      const discardButton = page.getByRole('button', { name: s.discardConfirm, exact: true });
      await discard.tap();
      await discardButton.waitFor({ state: 'visible' });
      await shot(page, `${locale}-discard-open`, t);
      bad.push(...(await layoutProblems(page, 'discard open', { maxWidth: PHONE.width, contained: CONTAINED })));
      bad.push(...(await axe(page, t, 'discard open')));
      await discard.tap();
      await discardButton.waitFor({ state: 'hidden' });

      await Promise.all([
        page.waitForURL(e.h.url(a.path)),
        page.getByRole('button', { name: s.confirm, exact: true }).tap(),
      ]);
      await page.locator('body[data-state="confirmed"]').waitFor({ timeout: 10_000 });
      await page.getByRole('heading', { name: s.confirmed }).waitFor();
      await shot(page, `${locale}-confirmed`, t);
      bad.push(...(await layoutProblems(page, 'confirmed', { maxWidth: PHONE.width, contained: CONTAINED })));
      bad.push(...(await axe(page, t, 'confirmed')));

      const got = await e.api('GET', `/v1/template-instances/${a.id}`);
      assert.equal(got.json.status, 'confirmed', got.text);
      assert.deepEqual(problems, []);
      assert.deepEqual(bad, []);
    });

    test(`${locale}: the keyboard alone reaches every control and discards`, { timeout: 90_000 }, async (t) => {
      const b = await stage(locale);
      const problems: string[] = [];
      const page = await open(e.h.url(b.path), problems);

      const controls = await controlsOf(page);
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

      // Enter opens the disclosure and moves the focus to its button; Shift+Tab and Space close it again.
      const summary = await keyOf(page, page.getByText(s.discard, { exact: true }));
      const discardButton = page.getByRole('button', { name: s.discardConfirm, exact: true });
      await tabTo(page, summary);
      await page.keyboard.press('Enter');
      await discardButton.waitFor({ state: 'visible' });
      await waitForFocus(page, await keyOf(page, discardButton)); // the focus moves into the form
      await shot(page, `${locale}-keyboard-discard`, t);
      await page.keyboard.press('Shift+Tab');
      assert.equal((await focusedIn(page))?.key, summary);
      await page.keyboard.press('Space');
      await discardButton.waitFor({ state: 'hidden' });
      assert.equal((await focusedIn(page))?.key, summary, 'the focus stays on the closed disclosure');

      await page.keyboard.press('Enter');
      await waitForFocus(page, await keyOf(page, discardButton));
      await Promise.all([page.waitForURL(e.h.url(b.path)), page.keyboard.press('Enter')]);
      await page.locator('body[data-state="discarded"]').waitFor({ timeout: 10_000 });
      await page.getByRole('heading', { name: s.discarded }).waitFor();
      await shot(page, `${locale}-discarded`, t);
      const bad = [
        ...(await layoutProblems(page, 'discarded', { maxWidth: PHONE.width, contained: CONTAINED })),
        ...(await axe(page, t, 'discarded')),
      ];

      const got = await e.api('GET', `/v1/template-instances/${b.id}`);
      assert.equal(got.json.status, 'discarded', got.text);
      assert.deepEqual(problems, []);
      assert.deepEqual(bad, []);
    });
  }
});
