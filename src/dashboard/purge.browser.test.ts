// "Delete permanently" in Debian's Chromium with JavaScript off: an owner signs in, opens a withdrawn document, goes
// through the confirmation page and lands on the list with the notice; the document is gone from the API. (No axe
// here: it needs scripts; the page is the withdraw confirmation's twin, which documents.browser.test.ts audits.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { launchChromium, skipWithoutChromium, watchPage } from '../testing/browser.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { createUserLink } from './people.service.js';
import { PASSWORD } from './testing/client.js';

describe('dashboard Delete permanently in Chromium, without JavaScript', { skip: skipWithoutChromium }, () => {
  let e: E2E;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    e = await startE2E();
    browser = await launchChromium({ javaScriptEnabled: false });
    page = await browser.context.newPage();
    watchPage(page, e.h.url(''), problems);
  });
  after(async () => {
    await browser?.close();
    await e?.close();
  });

  test('a withdrawn document, its confirmation page, then the list', { timeout: 90_000 }, async () => {
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
    await page.getByRole('button', { name: 'Delete permanently…' }).click();
    await page.getByRole('heading', { name: 'Delete this document permanently?' }).waitFor();
    await page.getByRole('button', { name: 'Delete permanently', exact: true }).click();
    await page.getByText('Document deleted permanently.').waitFor();
    assert.match(page.url(), /\/dashboard\/documents\?done=purged$/);
    assert.equal((await e.api('GET', `/v1/documents/${id}`)).status, 404);
    assert.deepEqual(problems, []);
  });
});
