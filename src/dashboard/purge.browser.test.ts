// "Delete permanently" in Debian's Chromium with JavaScript off: an owner signs in, opens a withdrawn document, goes
// through the confirmation page by keyboard alone and lands on the list with the notice; the document is gone from the
// API. Both pages are audited with axe (evaluated through DevTools, so it runs with the page's scripts off) and
// screenshotted at desktop width and at 360×740; the folder is named in the diagnostics.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { axe, launchChromium, skipWithoutChromium, watchPage } from '../testing/browser.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { createUserLink } from './people.service.js';
import { PASSWORD } from './testing/client.js';

const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-purge-shots-'));

describe('dashboard Delete permanently in Chromium, without JavaScript', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  // The audits: axe needs scripts, so a second browser with them on, signed in with the same cookies, opens each page.
  let scripted: Awaited<ReturnType<typeof launchChromium>>;
  const problems: string[] = [];

  before(async () => {
    e = await startE2E();
    browser = await launchChromium({ javaScriptEnabled: false });
    scripted = await launchChromium();
    page = await browser.context.newPage();
    watchPage(page, e.h.url(''), problems);
  });
  after(async () => {
    await browser?.close();
    await scripted?.close();
    await e?.close();
  });

  test('a withdrawn document, its confirmation page, then the list', { timeout: 90_000 }, async (t) => {
    const serious: string[] = [];
    const look = async (name: string) => {
      await scripted.context.addCookies(await browser.context.cookies());
      const p = await scripted.context.newPage();
      await p.goto(page.url());
      serious.push(...(await axe(p, t, name)));
      await p.setViewportSize({ width: 1280, height: 900 });
      await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
      await p.setViewportSize({ width: 360, height: 740 });
      await p.screenshot({ path: path.join(SHOTS, `${name}-360.png`), fullPage: true });
      await p.close();
    };
    t.diagnostic(`screenshots in ${SHOTS}`);
    const created = await e.api('POST', '/v1/signing-requests', {
      title: 'Lease to delete',
      signers: [{ role: 'tenant', email: 'tenant@client.example', name: 'Tenant' }],
      file: { name: 'lease.pdf', content_base64: b64(await makePdf({ pages: 1, text: [['Lease']] })) },
      placement: 'auto_append',
    });
    assert.equal(created.status, 201, created.text);
    const id = created.json.document_id as string;
    assert.equal((await e.api('POST', `/v1/documents/${id}/withdraw`)).status, 200);

    const link = await createUserLink(e.h, {
      email: 'ops@acme.example',
      workspaceId: e.workspaceId,
      role: 'owner',
      by: 'test',
    });
    await page.goto(e.h.url(new URL(link.url).pathname));
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByLabel('E-mail').fill('ops@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    await page.goto(e.h.url(`/dashboard/documents/${id}`));
    await look('document');
    await page.getByRole('button', { name: 'Delete permanently…' }).click();
    await page.getByRole('heading', { name: 'Delete this document permanently?' }).waitFor();
    await look('confirm');
    // Keyboard only: Tab until the confirming button has focus, then Enter.
    const focused = async () =>
      (await page.locator('button:focus').count()) ? (await page.locator('button:focus').textContent())?.trim() : null;
    for (let i = 0; i < 40 && (await focused()) !== 'Delete permanently'; i++) await page.keyboard.press('Tab');
    assert.equal((await focused())?.trim(), 'Delete permanently', 'reached by Tab');
    await page.keyboard.press('Enter');
    await page.getByText('Document deleted permanently.').waitFor();
    assert.match(page.url(), /\/dashboard\/documents\?done=purged$/);
    assert.equal((await e.api('GET', `/v1/documents/${id}`)).status, 404);
    await look('list');
    assert.deepEqual(problems, []);
    assert.deepEqual(serious, [], 'no serious or critical axe violation');
  });
});
