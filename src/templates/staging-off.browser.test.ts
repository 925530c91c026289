// The dashboard's "use template" form in Chromium on a deployment with review staging switched off
// (SIGNET_REVIEW_STAGING=0): no "review first" box, axe finds no serious violation, and sending works from it.
// Screenshots go to /tmp/signet-staging-off-shots-* (named in the diagnostics).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createUserLink } from '../dashboard/people.service.js';
import { PASSWORD } from '../dashboard/testing/client.js';
import { axe, launchChromium, skipWithoutChromium, watchPage } from '../testing/browser.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { templateBody } from './testing/fixtures.js';

const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-staging-off-shots-'));

describe('use a template with review staging off, in Chromium', { skip: skipWithoutChromium }, () => {
  let h: Harness;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const problems: string[] = [];
  before(async () => {
    h = await startHarness({ env: { SIGNET_REVIEW_STAGING: '0' } });
    browser = await launchChromium();
    page = await browser.context.newPage();
    watchPage(page, h.url(''), problems);
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  test('no review box; axe clean; the form sends', async (t) => {
    t.diagnostic(`screenshots in ${SHOTS}`);
    const { token, workspaceId } = await h.tenant('business');
    const tpl = await h.request('POST', '/v1/templates', { token, body: await templateBody() });
    assert.equal(tpl.status, 201, tpl.text);
    const link = await createUserLink(h, { email: 'ops@acme.example', workspaceId, role: 'member', by: 'test' });
    await page.goto(link.url.replace(/^https?:\/\/[^/]+/, h.url('')));
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByLabel('E-mail').fill('ops@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.goto(h.url(`/dashboard/templates/${tpl.json.id}/use`));
    assert.equal(await page.locator('[name="review"]').count(), 0, 'no review box');
    assert.deepEqual(await axe(page, t, 'template-use-staging-off'), [], 'no serious or critical axe violation');
    await page.screenshot({ path: path.join(SHOTS, 'template-use-staging-off.png'), fullPage: true });

    await page.locator('[name="client.name"]').fill('Client Person');
    await page.locator('[name="client.email"]').fill('client@example.com');
    await page.locator('[name="provider.name"]').fill('Provider Person');
    await page.locator('[name="provider.email"]').fill('provider@example.com');
    await page.locator('[name="client_name"]').fill('Ada Ltd');
    await page.locator('[name="plan"]').selectOption('pro');
    await page.locator('form button[type="submit"]').last().click();
    await page.waitForURL(/\/dashboard\/documents\/doc_/);
    await page.screenshot({ path: path.join(SHOTS, 'document-sent.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });
});
