// Qualified signatures in Debian's Chromium, on SQLite and PostgreSQL, against the local CSC API v2 provider: each of
// two signers, in their own browser, opens their link, sees the QES box, types a signature, continues to the
// provider, signs in with a one-time code and approves twice (identify, then the hash), and lands on Signet's signed
// page. The sealed PDF is judged by qpdf, pdfsig and openssl; the verification report calls both signatures
// qualified. A signer who cancels at the provider lands on the "cancelled" page, whose link leads back to a signable
// page. Screenshots are kept under os.tmpdir() (the path is printed); axe finds nothing serious.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { fill, strings } from '../i18n/i18n.js';
import { axe, launchChromium, skipWithoutChromium } from '../testing/browser.js';
import { bothDatabases } from '../testing/services.js';
import { assertQualifiedSeal, createQesRequest, startQesE2E, type QesE2E } from './testing/qes-e2e.js';

const databases = await bothDatabases();
const PROVIDER = 'Test QTSP';
const P = strings('en', 'page');
const Q = strings('en', 'qes');

for (const d of databases) {
  describe(`qualified signatures in Chromium (${d.name})`, { skip: d.skip || skipWithoutChromium }, () => {
    let q: QesE2E;
    let shots: string;
    before(async () => {
      q = await startQesE2E(d.database);
      shots = fs.mkdtempSync(path.join(os.tmpdir(), `signet-qes-browser-${d.name}-`));
    });
    after(async () => q?.close());

    /** A person's own browser on their link; script errors are collected. */
    async function open(token: string, problems: string[]) {
      const browser = await launchChromium();
      const page = await browser.context.newPage();
      page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
      await page.goto(q.e.h.url(`/sign/${token}`));
      await page.locator('[data-page="1"].rendered').waitFor({ timeout: 20_000 });
      return { browser, page };
    }

    /** The QES box and its button, then the typed signature; the button enabled. */
    async function fillSignerPage(page: Page, typed: string) {
      assert.equal(await page.locator('body').getAttribute('data-state'), 'open');
      assert.ok(await page.locator('#qes-intro').isVisible(), 'the QES box is shown');
      assert.equal(await page.locator('#qes-intro h3').textContent(), Q.introTitle);
      assert.equal(await page.locator('#qes-intro-body').textContent(), fill(Q.introBody, { provider: PROVIDER }));
      assert.equal(await page.locator('#sign-button').textContent(), fill(Q.continueTo, { provider: PROVIDER }));
      await page.locator('#signature-typed').fill(typed);
      await page.locator('#sign-button:not([disabled])').waitFor({ timeout: 5000 });
    }

    /** The provider's login page: a fresh one-time code, "Sign in"; then its consent page is shown. */
    async function providerLogin(page: Page, user: string, scope: 'service' | 'credential') {
      await page
        .waitForURL((u) => u.href.startsWith(q.provider.url) && u.searchParams.get('scope') === scope, {
          timeout: 15_000,
        })
        .catch(async (err) => {
          throw new Error(
            `not at the provider's ${scope} login: ${page.url()}\n${await page.locator('body').innerText()}`,
            {
              cause: err,
            },
          );
        });
      await page.getByLabel('One-time code').fill(q.provider.loginCode(user));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Authorize' }).waitFor({ timeout: 10_000 });
      if (scope === 'credential') {
        assert.equal(await page.locator('code.hash').count(), 1, 'the consent names the one hash');
        assert.match(await page.locator('main').innerText(), new RegExp(`credential ${user}-qes`));
      }
    }

    /**
     * "Approve" at the provider: Signet's callback then checks the signer's certificate against a CRL the provider
     * issues now, at real time; the manual clock, synced when the signer started, has fallen seconds behind while
     * the page rendered and the signer typed, and would see that CRL as not yet valid.
     */
    async function approve(page: Page) {
      q.syncClock();
      await page.getByRole('button', { name: 'Approve' }).click();
    }

    test(
      'two signers through the provider in Chromium; the sealed PDF verifies, both qualified',
      { timeout: 120_000 },
      async (t) => {
        const { e, provider } = q;
        t.diagnostic(`screenshots: ${shots}`);
        const id = await createQesRequest(e);
        const problems: string[] = [];
        const bad: string[] = [];
        const signers = [
          { email: 'anna@example.com', user: 'anna', typed: 'Anna Müller' },
          { email: 'li@example.com', user: 'li', typed: '李华' },
        ];
        for (const [i, s] of signers.entries()) {
          q.syncClock();
          const token = await e.linkFor(s.email);
          const { browser, page } = await open(token, problems);
          try {
            await fillSignerPage(page, s.typed);
            if (i === 0) {
              await page.screenshot({ path: path.join(shots, '1-signer-page-qes.png'), fullPage: true });
              bad.push(...(await axe(page, t, `${s.user}: signer page`)));
            }
            await page.locator('#sign-button').click();
            await providerLogin(page, s.user, 'service');
            await approve(page);
            // Back at Signet's callback, which sends the browser to the provider again for the hash.
            await providerLogin(page, s.user, 'credential');
            if (i === 0) await page.screenshot({ path: path.join(shots, '2-provider-consent.png'), fullPage: true });
            await approve(page);
            await page.waitForURL(e.h.url(`/sign/${token}`), { timeout: 20_000 });
            assert.equal(await page.locator('body').getAttribute('data-state'), 'signed', `${s.user}: signed page`);
            assert.equal(await page.locator('h1').textContent(), P.signedThanks);
            assert.match(await page.locator('main').innerText(), new RegExp(P.signedNext));
            if (i === 0) {
              await page.screenshot({ path: path.join(shots, '3-signed-page.png'), fullPage: true });
              bad.push(...(await axe(page, t, `${s.user}: signed page`)));
            }
          } finally {
            await browser.close();
          }
        }
        assert.deepEqual(problems, [], 'no script errors');
        assert.deepEqual(bad, [], 'no serious axe violation');
        await e.work();

        const doc = await e.api('GET', `/v1/documents/${id}`);
        assert.equal(doc.json.status, 'completed', doc.text);
        await assertQualifiedSeal(e, provider, id);
      },
    );

    test(
      'cancelling at the provider: the cancelled page, and back to a signable document',
      {
        timeout: 60_000,
      },
      async (t) => {
        const { e, provider } = q;
        const id = await createQesRequest(e);
        const token = await e.linkFor('anna@example.com');
        const problems: string[] = [];
        q.syncClock();
        const { browser, page } = await open(token, problems);
        try {
          await fillSignerPage(page, 'Anna Müller');
          await page.locator('#sign-button').click();
          await providerLogin(page, 'anna', 'service');
          provider.fail = 'cancel';
          await page.getByRole('button', { name: 'Approve' }).click();
          await page.locator('body[data-state="cancelled"]').waitFor({ timeout: 15_000 });
          assert.ok(page.url().startsWith(e.h.url('/qes/callback')), `on Signet's callback page: ${page.url()}`);
          assert.equal(await page.locator('h1').textContent(), Q.cancelledTitle);
          await page.screenshot({ path: path.join(shots, '4-cancelled.png'), fullPage: true });
          const bad = await axe(page, t, 'cancelled page');
          await page.getByRole('link', { name: Q.retry }).click();
          await page.waitForURL(e.h.url(`/sign/${token}`));
          await page.locator('[data-page="1"].rendered').waitFor({ timeout: 20_000 });
          await fillSignerPage(page, 'Anna Müller');
          assert.deepEqual(bad, [], 'no serious axe violation');
          assert.deepEqual(problems, [], 'no script errors');
          const doc = await e.api('GET', `/v1/documents/${id}`);
          assert.deepEqual(
            doc.json.signing_requests.map((r: any) => r.signed_at ?? null),
            [null, null],
            'nothing signed',
          );
        } finally {
          provider.fail = null;
          await browser.close();
        }
      },
    );
  });
}
