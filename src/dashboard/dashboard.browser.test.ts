// The dashboard in Debian's Chromium, as the person who runs a company's integrations uses it: the first owner sets a
// password from the `signet user create` link, signs in, creates an API key (copies it, uses it against /v1/me),
// locks it to an address that is not the caller's (403) and back, revokes it (401); adds a webhook for a local
// receiver, sends a test and sees it delivered; adds one the receiver refuses, sees the failure and its next attempt,
// fixes the receiver, replays, sees success. axe (@axe-core/playwright) checks every page; screenshots go to a folder.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { runSignet } from '../testing/child-server.js';
import { launchChromium, skipWithoutChromium } from '../testing/browser.js';
import { startReceiver, type Receiver } from '../testing/e2e.js';
import { startHarness, type Harness } from '../testing/harness.js';

const SHOTS = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-dashboard-shots-'));
const PASSWORD = 'a long and memorable passphrase';

describe('dashboard in Chromium', { skip: skipWithoutChromium }, () => {
  let h: Harness;
  let rx: Receiver;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let context: BrowserContext;
  let page: Page;
  const serious: string[] = [];
  const problems: string[] = [];
  let shot = 0;

  before(async () => {
    h = await startHarness({ start: Date.now() });
    rx = await startReceiver();
    browser = await launchChromium();
    context = browser.context;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.url('') });
    page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // A refused form answers 400 with the form again, a wrong password 401, a missing page 404: Chromium logs them.
      if (m.type() === 'error' && !/the server responded with a status of 40[014]/.test(m.text()))
        problems.push(`console: ${m.text()}`);
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(h.url(''))) problems.push(`third-party request: ${r.url()}`);
    });
  });
  after(async () => {
    await browser?.close();
    await rx?.close();
    await h?.close();
  });

  /** axe on the page as it is, and a screenshot named after it. */
  async function look(t: { diagnostic(m: string): void }, name: string) {
    const r = await new AxeBuilder({ page }).analyze();
    for (const v of r.violations) {
      t.diagnostic(`${name}: axe ${v.impact} ${v.id}: ${v.help}`);
      if (v.impact === 'serious' || v.impact === 'critical') serious.push(`${name}: ${v.id}`);
    }
    await page.screenshot({ path: path.join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  }

  const api = (token: string) =>
    fetch(h.url('/v1/me'), { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

  test('first owner: CLI link, password, sign-in; API keys: create, copy, allowlist, revoke', async (t) => {
    t.diagnostic(`screenshots in ${SHOTS}`);
    const ws = await h.workspace('business', 'Acme Integrations');
    const dbUrl = h.config.databaseUrl;
    const created = await runSignet(
      h.config.dataDir,
      ['user', 'create', '--email', 'ops@acme.example', '--workspace', ws.id, '--role', 'owner', '--json'],
      {
        DATABASE_URL: dbUrl,
      },
    );
    assert.equal(created.code, 0, created.stderr);
    const out = JSON.parse(created.stdout);
    assert.match(out.set_password_url, /\/dashboard\/set-password\/[A-Za-z0-9_-]{43}$/);

    await page.goto(h.url(new URL(out.set_password_url).pathname));
    await look(t, 'set-password');
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Your password is set. Sign in.').waitFor();
    await look(t, 'sign-in');
    await page.getByLabel('E-mail').fill('ops@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await look(t, 'overview');

    await page.getByRole('link', { name: 'API keys' }).click();
    await look(t, 'api-keys-empty');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByRole('heading', { name: 'API key created' }).waitFor();
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(key, /^svk_live_[0-9a-f]{32}$/);
    await look(t, 'api-key-created');
    assert.equal(await api(key), 200, 'the copied key works');

    await page.getByRole('link', { name: 'Set its allowed IPs and embed origins' }).click();
    await page.getByLabel('Allowed IPs').fill('10.20.30.40\n2001:db8::/32');
    await page.getByRole('button', { name: 'Save allowed IPs' }).click();
    await page.getByText('Allowed IPs saved.').waitFor();
    await look(t, 'api-key-allowlist');
    assert.equal(await api(key), 403, 'the caller is not on the list');
    await page.getByLabel('Allowed IPs').fill('not an address');
    await page.getByRole('button', { name: 'Save allowed IPs' }).click();
    await page.getByText(/refused entry "not an address".*nothing saved/).waitFor();
    await look(t, 'api-key-allowlist-refused');
    assert.equal(await api(key), 403, 'a refused save changed nothing');
    await page.getByLabel('Allowed IPs').fill('');
    await page.getByRole('button', { name: 'Save allowed IPs' }).click();
    await page.getByText('Allowed IPs saved.').waitFor();
    assert.equal(await api(key), 200);

    await page.getByRole('button', { name: 'Revoke this key…' }).click();
    await look(t, 'api-key-revoke');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText(/Revoked by user:ops@acme\.example/).waitFor();
    assert.equal(await api(key), 401);
    await page.getByRole('link', { name: '← API keys' }).click();
    await page.getByText('revoked', { exact: true }).waitFor();
    await look(t, 'api-keys');
  });

  test('webhooks: test event delivered; a refused delivery retries, is fixed and replayed', async (t) => {
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('Endpoint URL').fill(rx.url('/good'));
    await page.getByLabel('signing_request.signed').check();
    await page.getByLabel('document.completed').check();
    await look(t, 'webhooks-empty');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Webhook created' }).waitFor();
    const secret = await page.getByLabel('Signing secret').inputValue();
    assert.match(secret, /^whsec_/);
    rx.secrets.set('/good', secret);
    await look(t, 'webhook-created');
    await page.getByRole('link', { name: 'Open the webhook' }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event sent.').waitFor();
    await h.work();
    await page.reload();
    await page.locator('.delivery .badge.succeeded').first().waitFor();
    assert.equal(rx.events.filter((e) => e.path === '/good').length, 1);
    await look(t, 'webhook-delivered');

    // A receiver that refuses (it does not know the secret yet).
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('Endpoint URL').fill(rx.url('/bad'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const badSecret = await page.getByLabel('Signing secret').inputValue();
    await page.getByRole('link', { name: 'Open the webhook' }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await h.work();
    await page.getByRole('link', { name: 'Failed' }).click();
    await page.locator('.delivery .badge.retrying').waitFor();
    await page.getByText(/Next attempt/).waitFor();
    assert.match(await page.locator('.delivery table tbody tr').first().innerText(), /400/);
    await look(t, 'webhook-failed');

    rx.secrets.set('/bad', badSecret);
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText('Delivery replayed.').waitFor();
    await h.work();
    await page.getByRole('link', { name: 'Succeeded' }).click();
    await page.locator('.delivery .badge.succeeded').waitFor();
    const delivered = rx.events.filter((e) => e.path === '/bad');
    assert.equal(delivered.length, 1);
    await look(t, 'webhook-replayed');

    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('heading', { name: 'Delete this webhook?' }).waitFor();
    await look(t, 'webhook-delete');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.goto(h.url('/dashboard/developers/keys/key_not_here'));
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await look(t, 'not-found');
    await page.goto(h.url('/dashboard/overview'));
    await page.getByRole('link', { name: 'Audit log' }).click();
    for (const action of [
      'key.created',
      'key.ips_set',
      'key.revoked',
      'hook.created',
      'hook.test_sent',
      'delivery.replayed',
    ])
      await page.getByRole('cell', { name: action, exact: true }).first().waitFor();
    await look(t, 'audit-log');
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('cell', { name: 'ops@acme.example' }).waitFor();
    await look(t, 'people');
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Needs attention' }).waitFor();
    await look(t, 'overview-later');
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Change password' }).waitFor();
    await look(t, 'account');

    assert.deepEqual(serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });
});
