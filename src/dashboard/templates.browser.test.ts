// Templates in Debian's Chromium, the way a person works: an admin uploads a PDF with {{…}} markers, sees them
// offered as fields, adjusts a few, publishes version 1, publishes version 2 from the current one, uses the template
// with review and confirms it from "Waiting for review"; the signer is then invited. axe checks every page for
// serious or critical violations; screenshots go to /tmp/signet-tpl-shots-* (named in the diagnostics).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { templatePdf } from '../templates/testing/fixtures.js';
import { axe, launchChromium, skipWithoutChromium, watchPage } from '../testing/browser.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { createUserLink } from './people.service.js';
import { PASSWORD } from './testing/client.js';

const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-tpl-shots-'));

describe('dashboard templates in Chromium', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const serious: string[] = [];
  const problems: string[] = [];
  let shot = 0;

  before(async () => {
    e = await startE2E({ tier: 'enterprise' });
    browser = await launchChromium();
    page = await browser.context.newPage();
    watchPage(page, e.h.url(''), problems);
  });
  after(async () => {
    await browser?.close();
    await e?.close();
  });

  async function look(t: { diagnostic(m: string): void }, name: string) {
    serious.push(...(await axe(page, t, name)));
    await page.screenshot({ path: path.join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  }
  const input = (name: string) => page.locator(`[name="${name}"]`);

  test('create from a PDF with markers, publish v2, use it with review, confirm from the dashboard', async (t) => {
    t.diagnostic(`screenshots in ${SHOTS}`);
    const pdf = path.join(SHOTS, 'agreement.pdf');
    fs.writeFileSync(pdf, await templatePdf(2));

    const link = await createUserLink(e.h, {
      email: 'ops@acme.example',
      workspaceId: e.workspaceId,
      role: 'admin',
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

    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
    await look(t, 'templates-empty');
    await page
      .getByRole('button', { name: 'New template' })
      .or(page.getByRole('link', { name: 'New template' }))
      .click();
    await page.getByLabel('Name').fill('Services agreement');
    await page.getByLabel('PDF file').setInputFiles(pdf);
    await look(t, 'template-new');
    await page.getByRole('button', { name: 'Upload and find markers' }).click();
    await page.getByText('7 markers found in').waitFor();
    assert.equal(await input('f.0.anchor').inputValue(), '{{client_name}}');
    await look(t, 'template-markers');

    // Adjust what the markers suggested: plan is a choice, seats an optional number, the note is the client's.
    await input('f.1.type').selectOption('enum');
    await input('f.1.options').fill('basic, pro');
    await input('f.2.type').selectOption('number');
    await input('f.2.required').uncheck();
    await input('f.6.slot').fill('client');
    await input('s.1.order').fill('2');
    await page.getByRole('button', { name: 'Publish version 1' }).click();
    await page.getByText('Template created: version 1 is published.').waitFor();
    await page.getByText('Version 1 of 1').waitFor();
    await look(t, 'template-v1');

    await page
      .getByRole('button', { name: 'Publish a new version' })
      .or(page.getByRole('link', { name: 'Publish a new version' }))
      .click();
    assert.equal(await input('f.1.options').inputValue(), 'basic, pro', 'the form starts from the current version');
    await input('f.0.max_length').fill('80');
    await look(t, 'template-publish');
    await page.getByRole('button', { name: 'Publish version 2' }).click();
    await page.getByText('Version 2 of 2').waitFor();
    await look(t, 'template-v2');

    await page
      .getByRole('button', { name: 'Use this template' })
      .or(page.getByRole('link', { name: 'Use this template' }))
      .click();
    await page.locator('#u-0-name').fill('Client Person');
    await page.locator('#u-0-email').fill('client@customer.example');
    await page.locator('#u-1-name').fill('Provider Person');
    await page.locator('#u-1-email').fill('provider@vendor.example');
    await input('client_name').fill('Ada Ltd');
    await input('plan').selectOption('pro');
    await input('start_date').fill('2026-12-01');
    // An address the browser lets through but the API refuses (no dot in the domain): the message, and what was
    // typed is still there.
    await page.locator('#u-1-email').fill('provider@vendor');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Nothing was published or sent.').waitFor();
    assert.equal(await page.locator('#u-0-email').inputValue(), 'client@customer.example');
    assert.equal(await input('client_name').inputValue(), 'Ada Ltd');
    await look(t, 'template-use-refused');
    // The refusal is a 400 page, which Chromium reports on the console: that one, and nothing else, is expected.
    assert.deepEqual(problems.splice(0), [
      'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    await page.locator('#u-1-email').fill('provider@vendor.example');
    await page.getByLabel('Review before sending').check();
    await look(t, 'template-use');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Staged for review').waitFor();
    await look(t, 'reviews');
    await e.work();
    await assert.rejects(e.linkFor('client@customer.example'), /no signer link/, 'nobody invited before confirming');

    await page.getByRole('button', { name: 'Confirm and send Services agreement' }).click();
    await page.getByText('Confirmed: the signers are being invited.').waitFor();
    await look(t, 'reviews-confirmed');
    await e.work();
    assert.ok(await e.linkFor('client@customer.example'), 'confirmed: the first signer is invited');

    await page.getByRole('link', { name: 'Templates' }).click();
    await look(t, 'templates');
    await page.getByRole('link', { name: 'Services agreement' }).click();
    await page
      .getByRole('button', { name: 'Archive template' })
      .or(page.getByRole('link', { name: 'Archive template' }))
      .click();
    await page.getByRole('heading', { name: 'Archive Services agreement?' }).waitFor();
    await look(t, 'template-archive');
    await page.getByRole('button', { name: 'Archive template' }).click();
    await page.getByText('Template archived.').waitFor();
    await look(t, 'template-archived');

    assert.deepEqual(serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });
});
