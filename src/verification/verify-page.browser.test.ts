// The /verify page the way a person uses it: choose a PDF, press the button, read the report. JavaScript off (a
// plain form), axe without serious violations, no sideways scrolling on a phone; screenshots kept for a look.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { axe, launchChromium, skipWithoutChromium } from '../testing/browser.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { completeDocument, type Completed } from '../signing/testing/complete.js';

describe('the /verify page in Chromium', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let done: Completed;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let noJs: Awaited<ReturnType<typeof launchChromium>>;
  const shots = path.join(os.tmpdir(), `signet-verify-shots-${process.pid}`);
  before(async () => {
    e = await startE2E();
    done = await completeDocument(e, { names: ['王小明'], title: 'Mietvertrag Wohnung 3B' });
    // axe and layout checks run scripts of their own (DevTools); the plain-form flow runs with JavaScript off too.
    browser = await launchChromium();
    noJs = await launchChromium({ javaScriptEnabled: false });
  });
  after(async () => {
    await browser.close();
    await noJs.close();
    await e.close();
  });

  test('upload a sealed PDF, then a changed one; read the reports in German', async (t) => {
    const file = path.join(e.h.config.dataDir, 'vertrag.pdf');
    writeFileSync(file, done.pdf);
    const changed = Buffer.from(done.pdf);
    changed[250] ^= 0x02;
    const changedFile = path.join(e.h.config.dataDir, 'geaendert.pdf');
    writeFileSync(changedFile, changed);

    await browser.context.setExtraHTTPHeaders({ 'accept-language': 'de-DE,de;q=0.9' });
    const page = await browser.context.newPage();
    const serious: string[] = [];
    for (const [width, height] of [
      [1200, 900],
      [360, 740],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(e.h.url('/verify'));
      assert.equal(await page.locator('h1').textContent(), 'Signiertes PDF prüfen');
      serious.push(...(await axe(page, t, `form ${width}`)));
      await page.getByLabel('PDF-Datei').setInputFiles(file);
      await page.getByRole('button', { name: 'Prüfen' }).click();
      await page.waitForSelector('#verdict');
      assert.equal(await page.locator('#verdict').getAttribute('data-verdict'), 'valid');
      assert.match((await page.locator('main').textContent()) ?? '', /Mietvertrag Wohnung 3B/);
      assert.match((await page.locator('main').textContent()) ?? '', /PAdES B-LTA/);
      serious.push(...(await axe(page, t, `report ${width}`)));
      const scroll = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(scroll <= 0, `no sideways scrolling at ${width}px (${scroll}px)`);
      await page.screenshot({ path: path.join(shots, `valid-${width}.png`), fullPage: true });
    }
    await page.goto(e.h.url('/verify'));
    await page.getByLabel('PDF-Datei').setInputFiles(changedFile);
    await page.getByRole('button', { name: 'Prüfen' }).click();
    await page.waitForSelector('#verdict');
    assert.equal(await page.locator('#verdict').getAttribute('data-verdict'), 'invalid');

    // Without JavaScript: the same form, the same answer.
    await noJs.context.setExtraHTTPHeaders({ 'accept-language': 'de' });
    const plain = await noJs.context.newPage();
    await plain.goto(e.h.url('/verify'));
    await plain.getByLabel('PDF-Datei').setInputFiles(file);
    await plain.getByRole('button', { name: 'Prüfen' }).click();
    await plain.waitForSelector('#verdict');
    assert.equal(await plain.locator('#verdict').getAttribute('data-verdict'), 'valid');
    assert.match((await page.locator('main').textContent()) ?? '', /Nicht gültig/);
    serious.push(...(await axe(page, t, 'invalid report')));
    await page.screenshot({ path: path.join(shots, 'invalid-360.png'), fullPage: true });
    t.diagnostic(`screenshots in ${shots}`);
    assert.deepEqual(serious, []);
  });
});
