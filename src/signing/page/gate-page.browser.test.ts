// The verification gate in Debian's Chromium, with JavaScript off (the gate is plain forms) and then on: the signer
// asks for a code, types a wrong one, then the one from the e-mail, and only then sees the document and signs. The
// page passes axe; screenshots are written to the test's output folder.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { axe, CHROMIUM, launchChromium, skipWithoutChromium } from '../../testing/browser.js';
import { startE2E } from '../../testing/e2e.js';
import { plainPdf } from '../testing/requests.js';

const OUT = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-gate-'));

for (const javaScriptEnabled of [false, true]) {
  test(
    `the gate in Chromium (JavaScript ${javaScriptEnabled ? 'on' : 'off'}): code by e-mail, then the document`,
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      assert.ok(fs.existsSync(CHROMIUM), `CI=true and no Chromium at ${CHROMIUM}`);
      const e = await startE2E();
      t.after(() => e.close());
      const browser = await launchChromium({ javaScriptEnabled });
      t.after(() => browser.close());
      const email = `ada.${javaScriptEnabled ? 'js' : 'nojs'}@example.com`;
      const created = await e.api('POST', '/v1/signing-requests', {
        title: 'Consulting Agreement',
        placement: 'auto_append',
        file: { name: 'consulting.pdf', content_base64: await plainPdf(1) },
        signers: [{ role: 'client', name: 'Ada Lovelace', email, verification: 'email_code' }],
      });
      assert.equal(created.status, 201, created.text);
      await e.work();
      const token = await e.linkFor(email);
      const shot = async (name: string) => {
        const file = path.join(OUT, `${name}-${javaScriptEnabled ? 'js' : 'nojs'}.png`);
        await page.screenshot({ path: file, fullPage: true });
        t.diagnostic(`screenshot: ${file}`);
      };

      const page = await browser.context.newPage();
      const pdfs: string[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/document.pdf')) pdfs.push(r.url());
      });
      await page.goto(e.h.url(`/sign/${token}`));
      assert.equal(await page.locator('body').getAttribute('data-state'), 'verification');
      assert.equal(await page.locator('#gate-code').count(), 0, 'no code field before a code was sent');
      await shot('1-gate');
      // axe runs in the page, so only with JavaScript on.
      if (javaScriptEnabled) assert.deepEqual(await axe(page, t, 'gate'), []);

      await page.getByRole('button', { name: 'Send me a code' }).click();
      await page.locator('#gate-code').waitFor();
      assert.match((await page.locator('.gate-sent').textContent()) ?? '', /We sent a code to a\*\*\*@example\.com/);
      await e.work();
      const mail = (await e.smtp.parsed()).filter((m) => /verification/i.test(m.subject ?? '')).pop();
      const code = /^(\d{6})$/m.exec(mail?.text ?? '')?.[1];
      assert.ok(code, 'the code mail arrived');

      await page.locator('#gate-code').fill(code === '000000' ? '111111' : '000000');
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.locator('#gate-error:not(:empty)').waitFor();
      assert.match((await page.locator('#gate-error').textContent()) ?? '', /not right\. Tries left: 4/);
      await shot('2-wrong');
      if (javaScriptEnabled) assert.deepEqual(await axe(page, t, 'gate after a wrong code'), []);
      assert.deepEqual(pdfs, [], 'the document was not requested before the code');

      await page.locator('#gate-code').fill(code);
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForURL(e.h.url(`/sign/${token}`));
      assert.equal(await page.locator('body').getAttribute('data-state'), 'open');
      if (!javaScriptEnabled) return void (await shot('3-passed'));
      await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
      await page.locator('#signature-typed').fill('Ada Lovelace');
      await shot('3-document');
      await page.locator('#sign-button:not([disabled])').click();
      await page.locator('#status[data-state="signed"]').waitFor({ timeout: 10_000 });
      const doc = await e.api('GET', `/v1/documents/${created.json.document_id}`);
      assert.equal(doc.json.signing_requests[0].status, 'signed');
    },
  );
}
