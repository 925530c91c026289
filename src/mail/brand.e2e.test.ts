// A workspace's brand in its mail (issue 27), through the real app and a real SMTP peer: the HTML names the logo by
// Content-ID and the message carries it as an inline part with the logo's bytes and type; the button and links take
// the accent colour; the sender is the workspace "via Signet"; the text part is the unbranded one. A logo removed
// between queueing and sending leaves no broken image.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { simpleParser, type ParsedMail } from 'mailparser';
import { launchChromium, skipWithoutChromium } from '../testing/browser.js';
import { logoPng, setBrand } from '../testing/brand.js';
import { startE2E, type E2E } from '../testing/e2e.js';
import { plainPdf } from '../signing/testing/requests.js';

const ACCENT = '#1b1b1b';
const SHOTS = '/tmp/shots-brand-applied';

describe('branded mail through SMTP', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E();
  });
  after(async () => {
    await e?.close();
  });

  /** Sends one request to a new address and returns the invitation it received. */
  async function invite(
    tag: string,
    o: { beforeSending?: () => Promise<void> } = {},
  ): Promise<ParsedMail & { source: string }> {
    const email = `${tag}.${Math.random().toString(36).slice(2, 8)}@example.com`;
    const r = await e.api('POST', '/v1/signing-requests', {
      title: 'Lease',
      placement: 'auto_append',
      file: { name: 'lease.pdf', content_base64: await plainPdf(1) },
      signers: [{ role: 'tenant', name: 'Ada Lovelace', email }],
    });
    assert.equal(r.status, 201, r.text);
    await o.beforeSending?.();
    await e.work();
    const sent = e.smtp.received.find((m) => m.to.includes(email));
    assert.ok(sent, `no invitation to ${email}`);
    // As sent: mailparser would otherwise turn cid: references into data: URLs.
    return Object.assign(await simpleParser(sent.raw, { keepCidLinks: true }), { source: sent.raw.toString('latin1') });
  }

  test('unbranded: Signet’s colour, no image, no attachment', async () => {
    const mail = await invite('plain');
    assert.match(String(mail.html), /background:#1f4fd1;color:#ffffff/);
    assert.doesNotMatch(String(mail.html), /<img|cid:/);
    assert.equal(mail.attachments.length, 0);
  });

  test('the logo is an inline related part named by cid:, the button has the accent, the text part is plain', async () => {
    const plain = await invite('before');
    const logo = logoPng();
    await setBrand(e.h, e.workspaceId, { color: ACCENT, logo });
    const mail = await invite('branded');
    const html = String(mail.html);

    const cid = /<img src="cid:([^"]+)" alt="([^"]*)"/.exec(html);
    assert.ok(cid, 'the HTML shows the logo by Content-ID');
    assert.equal(cid[2], 'Test Workspace', 'its alt text is the workspace name');
    assert.equal(mail.attachments.length, 1);
    const part = mail.attachments[0]!;
    assert.equal(part.cid, cid[1]);
    assert.equal(part.contentType, 'image/png');
    assert.equal(part.contentDisposition, 'inline');
    assert.ok(Buffer.from(logo).equals(part.content), 'the attachment is the logo, byte for byte');
    // multipart/related holds the HTML and the image (mailparser reports related parts so).
    assert.equal(part.related, true);
    assert.match(mail.source, /Content-Type: multipart\/related;/);

    assert.match(html, new RegExp(`background:${ACCENT};color:#ffffff`), 'the button carries the accent');
    assert.match(html, new RegExp(`border-top:4px solid ${ACCENT}`));
    assert.match(html, new RegExp(`style="color:${ACCENT};word-break:break-all"`), 'the fallback link too');
    assert.doesNotMatch(html, /#1f4fd1/);

    assert.equal(mail.from?.value[0]?.name, 'Test Workspace via Signet');
    // The text part is the same message as before the brand, but for the link's token.
    const strip = (s: string | undefined) => String(s).replace(/\/sign\/[A-Za-z0-9_-]{43}/g, '/sign/…');
    assert.equal(strip(mail.text), strip(plain.text));
    assert.doesNotMatch(String(mail.text), /cid:|logo/);
  });

  test(
    'as a mail client shows it (Chromium): the logo drawn, the button in the accent',
    { skip: skipWithoutChromium },
    async () => {
      await setBrand(e.h, e.workspaceId, { color: ACCENT, logo: logoPng() });
      const mail = await invite('shown');
      // mailparser's default: cid: references become the attached image as data: URLs, as a mail client resolves them.
      const shown = await simpleParser(Buffer.from(mail.source, 'latin1'));
      const browser = await launchChromium({ javaScriptEnabled: false });
      try {
        const page = await browser.context.newPage();
        await page.setContent(String(shown.html), { waitUntil: 'load' });
        const img = page.locator('img').first();
        assert.equal(await img.getAttribute('alt'), 'Test Workspace');
        const box = await img.boundingBox();
        assert.ok(box && box.width > 100 && box.height > 30, `the logo is drawn: ${JSON.stringify(box)}`);
        fs.mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: path.join(SHOTS, 'mail-invitation.png'), fullPage: true });
        await page.setViewportSize({ width: 360, height: 740 });
        await page.screenshot({ path: path.join(SHOTS, 'mail-invitation-phone.png'), fullPage: true });
      } finally {
        await browser.close();
      }
    },
  );

  test('a logo removed after queueing: the message goes without the image, never with a broken one', async () => {
    await setBrand(e.h, e.workspaceId, { color: ACCENT, logo: logoPng() });
    const mail = await invite('removed', {
      beforeSending: () => setBrand(e.h, e.workspaceId, { logo: null }),
    });
    assert.doesNotMatch(String(mail.html), /<img|cid:/);
    assert.equal(mail.attachments.length, 0);
    assert.match(String(mail.html), new RegExp(`background:${ACCENT}`));
  });
});
