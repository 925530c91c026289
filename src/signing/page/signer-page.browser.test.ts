// End to end in Debian's Chromium: the real app on a real port, invitations through a real SMTP peer, the signing
// page driven by a browser. One signer signs with a typed signature, the other declines; the API then agrees.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launchChromium, skipWithoutChromium, watchPage } from '../../testing/browser.js';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { startSmtpPeer, type SmtpPeer } from '../../mail/testing/smtp-peer.js';
import { startHarness } from '../../testing/harness.js';

const skip = skipWithoutChromium;

/** The signer link of each recipient, read from the invitation e-mails; `work` runs the app's due background jobs. */
async function invitationLinks(
  smtp: SmtpPeer,
  emails: string[],
  work: () => Promise<void>,
  timeoutMs = 15_000,
): Promise<Map<string, string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await work();
    const links = new Map<string, string>();
    for (const mail of await smtp.parsed()) {
      const to = (Array.isArray(mail.to) ? mail.to : [mail.to]).flatMap((a) => a?.value ?? []).map((a) => a.address);
      const m = /\/sign\/([A-Za-z0-9_-]{43})\b/.exec(mail.text ?? '');
      for (const addr of to) if (addr && m) links.set(addr, `/sign/${m[1]}`);
    }
    if (emails.every((e) => links.has(e))) return links;
    if (Date.now() > deadline)
      throw new Error(`invitations not received in ${timeoutMs} ms; got ${[...links.keys()].join(', ') || 'none'}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens a signing link and waits for page 1 of the PDF to be drawn; collects anything the page complains about. */
async function openSigningPage(
  context: BrowserContext,
  url: string,
  problems: string[],
): Promise<{ page: Page; viewStatus: Promise<number> }> {
  const page = await context.newPage();
  watchPage(page, url, problems);
  const viewStatus = page
    .waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/view'), { timeout: 15_000 })
    .then((r) => r.status());
  await page.goto(url);
  await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
  return { page, viewStatus };
}

/** Size and ink of page 1's canvas: a rendered page is neither empty nor one flat colour. */
const canvasInk = (page: Page) =>
  page.evaluate(() => {
    const c = document.querySelector<HTMLCanvasElement>('[data-page="1"] canvas')!;
    const { data } = c.getContext('2d')!.getImageData(0, 0, c.width, c.height);
    let ink = 0;
    let paper = 0;
    for (let i = 0; i < data.length; i += 4) {
      const dark = data[i + 3]! > 0 && data[i]! + data[i + 1]! + data[i + 2]! < 3 * 160;
      if (dark) ink++;
      else paper++;
    }
    return { width: c.width, height: c.height, ink, paper };
  });

test(
  'signer 1 signs and signer 2 declines in Chromium; the API shows the outcome',
  { skip, timeout: 60_000 },
  async (t) => {
    assert.ok(fs.existsSync(CHROMIUM), `CI=true and no Chromium at ${CHROMIUM}`);
    const smtp = await startSmtpPeer();
    t.after(() => smtp.close());
    const h = await startHarness({ env: { SMTP_URL: smtp.url } });
    t.after(() => h.close());
    const browser = await launchChromium();
    t.after(() => browser.close());

    const { token } = await h.tenant('business');
    const pdf = await makePdf({
      pages: 2,
      text: [
        [
          'Consulting Agreement',
          'Between Northwind Traders and the Consultant.',
          '1. Scope. The Consultant advises on logistics.',
          '2. Fees. EUR 1,200 per day, invoiced monthly.',
        ],
        ['3. Term. Twelve months from signature.', '4. Law. German law applies.'],
      ],
    });
    const created = await h.request('POST', '/v1/signing-requests', {
      token,
      body: {
        title: 'Consulting Agreement',
        placement: 'auto_append',
        file: { name: 'consulting.pdf', content_base64: Buffer.from(pdf).toString('base64') },
        signers: [
          { role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' },
          { role: 'consultant', name: 'Bob Builder', email: 'bob@example.com' },
        ],
      },
    });
    assert.equal(created.status, 201, created.text);
    const documentId: string = created.json.document_id;
    const links = await invitationLinks(smtp, ['ada@example.com', 'bob@example.com'], () => h.work());
    const problems: string[] = [];

    // Signer 1: the PDF is drawn, their fields sit on it, a typed signature signs.
    const one = await openSigningPage(browser.context, h.url(links.get('ada@example.com')!), problems);
    await one.page.screenshot({ path: path.join(os.tmpdir(), `signet-signer-page1-${process.pid}.png`) });
    const ink = await canvasInk(one.page);
    assert.ok(ink.width > 0 && ink.height > 0, `canvas has no size: ${JSON.stringify(ink)}`);
    assert.ok(ink.ink > 200 && ink.paper > ink.ink, `page 1 looks blank: ${JSON.stringify(ink)}`);
    assert.equal(await one.viewStatus, 200);

    const fields = one.page.locator('[data-field-id]');
    assert.ok((await fields.count()) >= 1, 'no field overlay for signer 1');
    const signatureField = one.page.locator('.field-signature[data-field-id]').first();
    await signatureField.scrollIntoViewIfNeeded();
    const box = (await signatureField.boundingBox())!;
    const pageBox = (await signatureField.locator('xpath=ancestor::*[@data-page]').boundingBox())!;
    assert.ok(box.width > 10 && box.height > 10, `field overlay too small: ${JSON.stringify(box)}`);
    assert.ok(
      box.x >= pageBox.x &&
        box.y >= pageBox.y &&
        box.x + box.width <= pageBox.x + pageBox.width + 1 &&
        box.y + box.height <= pageBox.y + pageBox.height + 1,
      'field overlay outside its page',
    );

    assert.equal(await one.page.locator('#sign-button').isDisabled(), true, 'Sign is enabled without a signature');
    await one.page.locator('#signature-typed').fill('Ada Lovelace');
    await assert.doesNotReject(one.page.locator('#sign-button:not([disabled])').waitFor({ timeout: 2000 }));
    assert.match((await signatureField.textContent()) ?? '', /Ada Lovelace/);
    const shot = path.join(os.tmpdir(), `signet-signer-page-${process.pid}.png`);
    await one.page.screenshot({ path: shot });
    t.diagnostic(`screenshot: ${shot}`);
    await one.page.locator('#sign-button').click();
    await one.page.locator('#status[data-state="signed"]').waitFor({ timeout: 10_000 });
    await one.page.screenshot({ path: path.join(os.tmpdir(), `signet-signer-signed-${process.pid}.png`) });

    // Signer 2 declines with a reason.
    const two = await openSigningPage(browser.context, h.url(links.get('bob@example.com')!), problems);
    await two.page.locator('#decline-button').click();
    await two.page.locator('#decline-reason').fill('The fee schedule is wrong.');
    await two.page.locator('#decline-confirm').click();
    await two.page.locator('#status[data-state="declined"]').waitFor({ timeout: 10_000 });

    // The link of a closed request now shows the closed page.
    const again = await browser.context.newPage();
    const res = await again.goto(h.url(links.get('bob@example.com')!));
    assert.equal(res?.status(), 200);
    assert.equal(await again.locator('#status').getAttribute('data-state'), 'declined');

    assert.deepEqual(problems, []);
    const doc = await h.request('GET', `/v1/documents/${documentId}`, { token });
    assert.equal(doc.status, 200, doc.text);
    assert.equal(doc.json.status, 'declined');
    const byEmail = new Map<string, { status: string; viewed_at: string | null; decline_reason: string | null }>(
      doc.json.signing_requests.map((r: { signer: { email: string } }) => [r.signer.email, r]),
    );
    assert.equal(byEmail.get('ada@example.com')?.status, 'signed');
    assert.ok(byEmail.get('ada@example.com')?.viewed_at, 'viewing was not recorded');
    assert.equal(byEmail.get('bob@example.com')?.status, 'declined');
    assert.equal(byEmail.get('bob@example.com')?.decline_reason, 'The fee schedule is wrong.');
  },
);
