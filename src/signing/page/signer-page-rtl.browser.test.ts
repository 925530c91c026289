// The signer page in Arabic in Debian's Chromium: the real app on a real port, the invitation through a real SMTP
// peer. The page is laid out right to left (panel, buttons and mode switch mirrored against the same page in
// English), while the PDF and the fields drawn on it are not mirrored; the invitation mail is right to left too.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { CHROMIUM, launchChromium, skipWithoutChromium } from '../../testing/browser.js';
import { makePdf } from '../../documents/pdf/testing/fixtures.js';
import { startSmtpPeer } from '../../mail/testing/smtp-peer.js';
import { startHarness } from '../../testing/harness.js';

const SHOTS = os.tmpdir();

type Box = { x: number; y: number; width: number; height: number };
const box = async (page: Page, selector: string): Promise<Box> => {
  const b = await page.locator(selector).first().boundingBox();
  assert.ok(b, `${selector} is not laid out`);
  return b;
};

/** Where things sit: the panel against the viewer, the two modes, the two decline buttons, a field on its page. */
async function layout(page: Page) {
  const panel = await box(page, '#panel');
  const viewer = await box(page, '#viewer');
  const typed = await box(page, '#mode-typed');
  const drawn = await box(page, '#mode-drawn');
  await page.locator('#decline-button').click();
  const cancel = await box(page, '#decline-cancel');
  const confirm = await box(page, '#decline-confirm');
  await page.locator('#decline-cancel').click();
  const field = await box(page, '.field-signature[data-field-id]');
  const sheet = (await page
    .locator('.field-signature[data-field-id]')
    .first()
    .locator('xpath=ancestor::*[@data-page]')
    .boundingBox())!;
  return {
    panelLeftOfViewer: panel.x + panel.width <= viewer.x + 1,
    typedLeftOfDrawn: typed.x + typed.width <= drawn.x + 1,
    cancelLeftOfConfirm: cancel.x + cancel.width <= confirm.x + 1,
    // The field's place on its page, as fractions of the page: the document itself must never mirror.
    fieldAt: [(field.x - sheet.x) / sheet.width, (field.y - sheet.y) / sheet.height],
    direction: await page.evaluate(() => getComputedStyle(document.body).direction),
    html: await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir]),
  };
}

test(
  'the Arabic signer page is laid out right to left in Chromium; the document is not',
  { skip: skipWithoutChromium, timeout: 90_000 },
  async (t) => {
    assert.ok(fs.existsSync(CHROMIUM), `CI=true and no Chromium at ${CHROMIUM}`);
    const smtp = await startSmtpPeer();
    t.after(() => smtp.close());
    const h = await startHarness({ env: { SMTP_URL: smtp.url } });
    t.after(() => h.close());
    const browser = await launchChromium();
    t.after(() => browser.close());

    const { token } = await h.tenant('business');
    const pdf = Buffer.from(
      await makePdf({ pages: 1, text: [['Lease agreement', 'Between the parties named below.']] }),
    );
    const emails = { ar: 'layla@example.com', en: 'ada@example.com' } as const;
    for (const [locale, email] of Object.entries(emails)) {
      const created = await h.request('POST', '/v1/signing-requests', {
        token,
        body: {
          title: locale === 'ar' ? 'عقد إيجار' : 'Lease agreement',
          locale,
          placement: 'auto_append',
          file: { name: 'lease.pdf', content_base64: pdf.toString('base64') },
          signers: [{ role: 'tenant', name: locale === 'ar' ? 'ليلى الحسن' : 'Ada Lovelace', email }],
        },
      });
      assert.equal(created.status, 201, created.text);
    }

    // The invitations: the Arabic one is right to left in both parts.
    const links = new Map<string, string>();
    const mails = new Map<string, { html: string; text: string; subject: string }>();
    for (let i = 0; i < 150 && links.size < 2; i++) {
      await h.work();
      for (const m of await smtp.parsed()) {
        const to = (Array.isArray(m.to) ? m.to : [m.to]).flatMap((a) => a?.value ?? [])[0]?.address ?? '';
        const link = /\/sign\/([A-Za-z0-9_-]{43})\b/.exec(m.text ?? '');
        if (link) links.set(to, `/sign/${link[1]}`);
        mails.set(to, { html: String(m.html), text: m.text ?? '', subject: m.subject ?? '' });
      }
      if (links.size < 2) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(links.size, 2, 'both invitations arrived');
    const arMail = mails.get(emails.ar)!;
    assert.match(arMail.subject, /^تطلب منك .+ توقيع «عقد إيجار»$/);
    assert.match(arMail.html, /<html lang="ar" dir="rtl">/);
    assert.ok(arMail.text.startsWith('\u200fمرحبًا ليلى الحسن،'), arMail.text);
    assert.doesNotMatch(mails.get(emails.en)!.html, /dir="rtl"/);

    const problems: string[] = [];
    const open = async (email: string) => {
      const page = await browser.context.newPage();
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      await page.goto(h.url(links.get(email)!));
      await page.locator('[data-page="1"].rendered').waitFor({ timeout: 20_000 });
      await page.locator('.field-signature[data-field-id]').first().waitFor({ timeout: 5_000 });
      return page;
    };

    const ar = await open(emails.ar);
    const en = await open(emails.en);
    const [arLayout, enLayout] = [await layout(ar), await layout(en)];
    assert.deepEqual(arLayout.html, ['ar', 'rtl']);
    assert.deepEqual(enLayout.html, ['en', '']);
    assert.equal(arLayout.direction, 'rtl');
    assert.equal(enLayout.direction, 'ltr');
    // English: viewer then panel, typed then drawn, cancel then confirm, left to right; Arabic: each mirrored.
    assert.deepEqual(
      [enLayout.panelLeftOfViewer, enLayout.typedLeftOfDrawn, enLayout.cancelLeftOfConfirm],
      [false, true, true],
    );
    assert.deepEqual(
      [arLayout.panelLeftOfViewer, arLayout.typedLeftOfDrawn, arLayout.cancelLeftOfConfirm],
      [true, false, false],
    );
    for (const i of [0, 1])
      assert.ok(
        Math.abs(arLayout.fieldAt[i]! - enLayout.fieldAt[i]!) < 0.01,
        `field at ${arLayout.fieldAt} vs ${enLayout.fieldAt}`,
      );

    assert.equal(await ar.locator('#panel-title').textContent(), 'المراجعة والتوقيع');
    assert.equal(await ar.locator('#sign-button').textContent(), 'توقيع');
    // Text is aligned to the start of the line, which in Arabic is the right.
    const consent = await ar.evaluate(() => {
      const p = document.querySelector('.consent')!;
      const r = document.createRange();
      r.selectNodeContents(p);
      const text = r.getBoundingClientRect();
      const box = p.getBoundingClientRect();
      return { textRight: text.right, boxRight: box.right, textLeft: text.left, boxLeft: box.left };
    });
    assert.ok(
      Math.abs(consent.textRight - consent.boxRight) < 2,
      `consent starts on the right: ${JSON.stringify(consent)}`,
    );

    await ar.locator('#signature-typed').fill('ليلى الحسن');
    await ar.locator('#sign-button:not([disabled])').waitFor({ timeout: 2000 });
    const shot = path.join(SHOTS, `signet-signer-page-ar-${process.pid}.png`);
    await ar.screenshot({ path: shot });
    t.diagnostic(`screenshot: ${shot}`);
    await ar.setViewportSize({ width: 360, height: 740 });
    const narrow = path.join(SHOTS, `signet-signer-page-ar-360-${process.pid}.png`);
    await ar.screenshot({ path: narrow, fullPage: true });
    t.diagnostic(`screenshot: ${narrow}`);
    assert.ok(
      await ar.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1),
      'no sideways scroll at 360 px in Arabic',
    );

    await ar.locator('#sign-button').click();
    await ar.locator('#status[data-state="signed"]').waitFor({ timeout: 10_000 });
    assert.match((await ar.locator('#status').textContent()) ?? '', /شكرًا لك، لقد وقّعت هذا المستند/);
    const done = await browser.context.newPage();
    await done.goto(h.url(links.get(emails.ar)!));
    assert.deepEqual(await done.evaluate(() => [document.documentElement.lang, document.documentElement.dir]), [
      'ar',
      'rtl',
    ]);
    assert.deepEqual(problems, []);
  },
);
