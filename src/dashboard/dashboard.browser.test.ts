// The dashboard in Debian's Chromium, as the person who runs a company's integrations uses it: the first owner sets a
// password from the `signet user create` link, signs in, creates an API key (copies it, uses it against /v1/me),
// locks it to an address that is not the caller's (403) and back, revokes it (401); adds a webhook for a local
// receiver, sends a test and sees it delivered; adds one the receiver refuses, sees the failure and its next attempt,
// fixes the receiver, replays, sees success. Then someone whose browser asks for German: the pages under <html lang="de">
// in German, the copy button's words, the API's English refusal marked lang="en". axe (axe-core, testing/browser.ts) checks
// every page; screenshots go to a folder.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { runSignet } from '../testing/child-server.js';
import { launchChromium, pageShots, skipWithoutChromium, statusLine, watchPage } from '../testing/browser.js';
import { startReceiver, type Receiver } from '../testing/e2e.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { createUserLink } from './people.service.js';

const shots = pageShots('dashboard');
const PASSWORD = 'a long and memorable passphrase';
const PASSWORD_DE = 'ein langes und gut merkbares Passwort';

describe('dashboard in Chromium', { skip: skipWithoutChromium }, () => {
  let h: Harness;
  let rx: Receiver;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    h = await startHarness({ start: Date.now() });
    rx = await startReceiver();
    browser = await launchChromium();
    context = browser.context;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.url('') });
    page = await context.newPage();
    // A refused form answers 400 with the form again, a wrong password 401, a missing page 404: Chromium logs them.
    watchPage(page, h.url(''), problems, { expectedErrors: statusLine(400, 401, 404) });
  });
  after(async () => {
    await browser?.close();
    await rx?.close();
    await h?.close();
  });

  const look = (t: { diagnostic(m: string): void }, name: string) => shots.look(page, t, name);

  const api = (token: string) =>
    fetch(h.url('/v1/me'), { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

  test('first owner: CLI link, password, sign-in; API keys: create, copy, allowlist, revoke', async (t) => {
    t.diagnostic(`screenshots in ${shots.dir}`);
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

    assert.deepEqual(shots.serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });

  test('in German (Accept-Language: de): the link, sign-in, navigation, a document, a key, a refusal', async (t) => {
    await context.setExtraHTTPHeaders({ 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' });
    const lookDe = async (name: string) => {
      assert.equal(await page.locator('html').getAttribute('lang'), 'de', `${name}: <html lang>`);
      await look(t, name);
    };
    const ws = await h.workspace('business', 'Müller & Söhne GmbH');
    const key = await h.key(ws.id);
    const doc = await h.request('POST', '/v1/signing-requests', {
      token: key.plaintext,
      body: {
        signers: [
          { role: 'kunde', email: 'eleni@example.com', name: 'Ελένη Παπαδοπούλου' },
          { role: 'anbieter', email: 'jose@example.com', name: 'José Müller-Łukasiewicz' },
        ],
        file: { name: 'vertrag.pdf', content_base64: Buffer.from(await makePdf({ pages: 2 })).toString('base64') },
        placement: 'auto_append',
        title: 'Rahmenvertrag 2027',
        locale: 'de',
      },
    });
    assert.equal(doc.status, 201, doc.text);
    await h.work();
    const link = await createUserLink(h, {
      email: 'inhaberin@example.com',
      workspaceId: ws.id,
      role: 'owner',
      by: 'test',
    });

    await page.goto(h.url(new URL(link.url).pathname));
    await page.getByRole('heading', { name: 'Passwort festlegen' }).waitFor();
    await lookDe('de-passwort-festlegen');
    await page.getByLabel('Neues Passwort').fill(PASSWORD_DE);
    await page.getByLabel('Passwort wiederholen').fill(PASSWORD_DE);
    await page.getByRole('button', { name: 'Passwort speichern' }).click();
    await page.getByText('Ihr Passwort ist festgelegt. Melden Sie sich an.').waitFor();
    await lookDe('de-anmelden');
    await page.getByLabel('E-Mail').fill('inhaberin@example.com');
    await page.getByLabel('Passwort').fill(PASSWORD_DE);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.getByRole('heading', { name: 'Übersicht' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Hauptmenü' });
    for (const name of ['Übersicht', 'Dokumente', 'API-Schlüssel', 'Webhooks', 'Personen', 'Audit-Protokoll', 'Konto'])
      await nav.getByRole('link', { name, exact: true }).waitFor();
    await page.getByText('Dokumente in diesem Monat').waitFor();
    await page.getByText('angemeldet als inhaberin@example.com (Inhaber)').waitFor();
    await lookDe('de-uebersicht');

    await nav.getByRole('link', { name: 'Dokumente' }).click();
    await page.getByRole('cell', { name: 'in Bearbeitung' }).waitFor();
    await page.getByText('0 von 2 unterschrieben').waitFor();
    await lookDe('de-dokumente');
    await page.getByRole('link', { name: 'Rahmenvertrag 2027' }).click();
    await page.getByRole('heading', { name: 'Unterzeichnende' }).waitFor();
    await page.getByText(/In beliebiger Reihenfolge · [0-9]+ Seiten \(vertrag\.pdf\)/).waitFor();
    await page.getByRole('button', { name: 'eleni@example.com erinnern' }).waitFor();
    await page.getByRole('link', { name: 'Prüfzertifikat (PDF)' }).waitFor();
    assert.equal(await page.getByRole('cell', { name: 'eingeladen' }).count(), 2);
    await lookDe('de-dokument');

    await nav.getByRole('link', { name: 'API-Schlüssel' }).click();
    await page.getByRole('button', { name: 'API-Schlüssel erstellen' }).click();
    await page.getByRole('heading', { name: 'API-Schlüssel erstellt' }).waitFor();
    await page.getByRole('button', { name: 'Kopieren' }).click();
    await page.getByRole('button', { name: 'Kopiert' }).waitFor();
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^svk_live_[0-9a-f]{32}$/);
    await lookDe('de-schluessel-erstellt');
    // The button says its own word again afterwards (a page timer, not a server schedule).
    await page.getByRole('button', { name: 'Kopieren' }).waitFor();

    await nav.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpunkt-URL').fill('ftp://example.com/ereignisse');
    await page.getByRole('button', { name: 'Endpunkt hinzufügen' }).click();
    const refusal = page.locator('#create-error');
    await refusal.waitFor();
    assert.equal(await refusal.getAttribute('lang'), 'en', "the API's message keeps its English, marked");
    await lookDe('de-webhook-abgelehnt');

    await page.goto(h.url('/dashboard/developers/keys/key_not_here'));
    await page.getByRole('heading', { name: 'Nicht gefunden' }).waitFor();
    await page.getByRole('link', { name: 'Zurück zur Übersicht' }).waitFor();
    await lookDe('de-nicht-gefunden');

    assert.deepEqual(shots.serious, [], 'no serious or critical axe violation on any page');
    assert.deepEqual(problems, []);
  });
});
