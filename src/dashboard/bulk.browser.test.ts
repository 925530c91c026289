// Bulk send in Debian's Chromium, the way a member works: open the template's bulk page, download the example CSV,
// upload a CSV with two bad rows, read the dry run, send the rest, and watch the progress page (which reloads itself
// through its Refresh header, no script) reach Completed. axe checks every page for serious or critical violations;
// screenshots go to /tmp/signet-bulk-shots-*/ (named in the diagnostics).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { templateBody } from '../templates/testing/fixtures.js';
import { bulkCsv, countRows } from '../templates/testing/bulk.js';
import { downloadBytes, launchChromium, skipWithoutChromium, watchPage, pageShots } from '../testing/browser.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { createUserLink } from './people.service.js';
import { PASSWORD } from './testing/client.js';

const shots = pageShots('bulk');

describe('dashboard bulk send in Chromium', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const problems: string[] = [];

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

  const look = (t: { diagnostic(m: string): void }, name: string) => shots.look(page, t, name);

  test('example, upload with bad rows, dry run, send, progress to completed', async (t) => {
    t.diagnostic(`screenshots in ${shots.dir}`);
    const tpl = await e.api('POST', '/v1/templates', await templateBody('Services agreement'));
    assert.equal(tpl.status, 201, tpl.text);
    const link = await createUserLink(e.h, {
      email: 'sam@acme.example',
      workspaceId: e.workspaceId,
      role: 'member',
      by: 'test',
    });
    await page.goto(e.h.url(new URL(link.url).pathname));
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByLabel('E-mail').fill('sam@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    // From the menu to the template, then its bulk send.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('link', { name: 'Services agreement' }).click();
    await page.getByRole('button', { name: 'Send to many (CSV)' }).click();
    await page.getByRole('heading', { name: 'Bulk send “Services agreement”' }).waitFor();
    await look(t, 'bulk');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download the example CSV (version 1)' }).click(),
    ]);
    const example = (await downloadBytes(download)).toString('utf8');
    assert.match(example, /^client\.name,client\.email,client\.phone,client\.channel,/);

    await page.getByLabel('CSV file (UTF-8)').setInputFiles({
      name: 'clients.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(bulkCsv('browser', 8, { 2: 'email', 5: 'plan' })),
    });
    await page.getByRole('button', { name: 'Check the rows (dry run)' }).click();
    await page.getByRole('heading', { name: '3. Dry run' }).waitFor();
    const status = await page.getByRole('status').innerText();
    assert.match(status, /6 of 8 rows are ready to send; 2 have problems\./);
    const bad = page.getByRole('table', { name: 'Rows with problems' });
    assert.deepEqual(await bad.locator('tbody th').allInnerTexts(), ['2', '5']);
    await look(t, 'bulk-dry-run');

    await page.getByRole('button', { name: 'Send 6 rows' }).click();
    await page.getByRole('heading', { name: 'Bulk send', exact: true }).waitFor();
    await page.getByText('Queued').first().waitFor();
    await look(t, 'bulk-send-queued');

    await e.work();
    // No script: the page's Refresh header reloads it while the send runs.
    await page.locator('.badge', { hasText: 'Completed' }).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('progress').getAttribute('value'), '8');
    await page.getByText('8 of 8 rows done: 6 sent, 2 failed.').waitFor();
    assert.equal(await page.locator('tbody a[href^="/dashboard/documents/"]').count(), 6);
    await look(t, 'bulk-send-completed');
    assert.equal(await countRows(e.h.db, 'bulk_sends', tpl.json.id), 1, 'one bulk send');

    await page.locator('tbody a[href^="/dashboard/documents/"]').first().click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();

    assert.deepEqual(shots.serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });
});
