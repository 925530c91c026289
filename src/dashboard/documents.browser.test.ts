// The dashboard's Documents pages in Debian's Chromium: an owner signs in, opens the list, searches by a signer's
// e-mail, filters by status, opens a document (signers, audit trail, downloads), reminds a signer, withdraws another
// document through its confirmation page, and sees a staged template document. axe (axe-core, testing/browser.ts) checks
// every page for serious or critical violations; screenshots go to a temporary folder named in the diagnostics.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { templateBody, VALUES } from '../templates/testing/fixtures.js';
import { downloadBytes, launchChromium, skipWithoutChromium, watchPage, pageShots } from '../testing/browser.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { createUserLink } from './people.service.js';
import { PASSWORD } from './testing/client.js';

const shots = pageShots('documents');

describe('dashboard documents in Chromium', { skip: skipWithoutChromium }, () => {
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

  /** Sends a document; with `callback`, its own webhook to that path of the test's receiver. */
  async function send(title: string, signers: string[], callback?: string) {
    const r = await e.api('POST', '/v1/signing-requests', {
      title,
      signers: signers.map((email, i) => ({ role: `signer${i + 1}`, email, name: `Signer ${i + 1}` })),
      file: { name: 'contract.pdf', content_base64: b64(await makePdf({ pages: 1, text: [[title]] })) },
      placement: 'auto_append',
      ...(callback ? { callback_url: e.rx.url(callback) } : {}),
    });
    assert.equal(r.status, 201, r.text);
    if (callback) e.rx.secrets.set(callback, r.json.callback.secret);
    return r.json.document_id as string;
  }

  test('list, search, filter, a document, remind, withdraw, a staged template document', async (t) => {
    t.diagnostic(`screenshots in ${shots.dir}`);
    const ada = 'ada.lovelace@client.example';
    await send('Master services agreement', [ada, 'grace.hopper@vendor.example'], '/msa');
    await send('Mutual NDA', ['alan.turing@partner.example']);
    await send('Order form 2026-11', ['edsger@customer.example']);
    await e.work();
    await e.h.request('POST', `/sign/${await e.linkFor('grace.hopper@vendor.example')}/view`);
    await e.h.request('POST', `/sign/${await e.linkFor('grace.hopper@vendor.example')}/sign`, {
      body: { signature: { type: 'typed', text: 'Grace Hopper' } },
    });
    const tpl = await e.api('POST', '/v1/templates', await templateBody('Services agreement'));
    const staged = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
      recipients: [
        { slot: 'client', name: 'Client Person', email: 'client@customer.example' },
        { slot: 'provider', name: 'Provider Person', email: 'provider@vendor.example' },
      ],
      field_values: VALUES,
      review: true,
      title: 'Services agreement for review',
    });
    assert.equal(staged.status, 201, staged.text);

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

    await page.getByRole('link', { name: 'Documents' }).click();
    await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
    assert.equal(await page.locator('tbody tr').count(), 4);
    await look(t, 'documents');

    // Keyboard only: the search box, then Enter submits the GET form.
    await page.getByLabel('Title or signer e-mail').focus();
    await page.keyboard.type('ADA.LOVELACE');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=ADA\.LOVELACE/);
    assert.equal(await page.locator('tbody tr').count(), 1);
    await page.getByRole('link', { name: 'Master services agreement' }).waitFor();
    await look(t, 'documents-search');

    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByLabel('Status').selectOption('draft');
    await page.getByRole('button', { name: 'Show documents' }).click();
    await page.getByRole('link', { name: 'Services agreement for review' }).click();
    await page.getByText('Staged for review.').waitFor();
    await look(t, 'document-staged');

    await page.getByRole('link', { name: '← Documents' }).click();
    await page.getByRole('link', { name: 'Master services agreement' }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    await look(t, 'document');
    // Its own webhook (callback_url) is on its page, with its deliveries a click away, and back.
    await page.getByRole('heading', { name: 'Webhook of this document' }).waitFor();
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('heading', { name: `Webhook ${e.rx.url('/msa')}` }).waitFor();
    await look(t, 'document-webhook');
    await page.getByRole('link', { name: /^\(document doc_/ }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    await page.getByRole('button', { name: `Remind ${ada}` }).click();
    await page.getByText('Reminder sent.').waitFor();
    await look(t, 'document-reminded');
    await e.work();
    assert.equal((await e.linksFor(ada)).length, 2, 'the reminder was mailed');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Audit certificate (PDF)' }).click(),
    ]);
    assert.equal((await downloadBytes(download)).subarray(0, 5).toString(), '%PDF-');

    await page.getByRole('button', { name: 'Withdraw document…' }).click();
    await page.getByRole('heading', { name: 'Withdraw this document?' }).waitFor();
    await look(t, 'document-withdraw');
    await page.getByRole('button', { name: 'Withdraw document' }).click();
    await page.getByText('Document withdrawn.').waitFor();
    await look(t, 'document-withdrawn');

    assert.deepEqual(shots.serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });
});
