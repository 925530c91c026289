// The signer's copy page in Debian's Chromium: the real app on a real port, a document signed over HTTP, the link
// taken from the completion e-mail. With JavaScript off, both files download through plain links and the PDF is the
// sealed file byte for byte; the page (German, from Accept-Language), the expired page and the signer page after
// completion are axe-clean. Screenshots go to the temp dir.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { axe, CHROMIUM, downloadBytes, launchChromium, skipWithoutChromium, watchPage } from '../../testing/browser.js';
import { startE2E, type E2E } from '../../testing/e2e.js';
import { plainPdf, signers } from '../testing/requests.js';

const skip = skipWithoutChromium;
const SHOTS = os.tmpdir();

async function completedDocument(e: E2E) {
  const people = signers(1);
  const r = await e.api('POST', '/v1/signing-requests', {
    signers: people,
    title: 'Rahmenvertrag Müller (2026)',
    file: { name: 'msa.pdf', content_base64: await plainPdf(1) },
    placement: 'auto_append',
  });
  assert.equal(r.status, 201, r.text);
  await e.work();
  const signToken = await e.linkFor(people[0]!.email);
  assert.equal((await e.h.request('POST', `/sign/${signToken}/view`)).status, 200);
  const s = await e.h.request('POST', `/sign/${signToken}/sign`, { body: { signature: { type: 'typed', text: 'S' } } });
  assert.equal(s.status, 200, s.text);
  await e.work();
  const mail = (await e.smtp.parsed()).find((m) => /\/copy\//.test(m.text ?? ''));
  const copyToken = /\/copy\/([A-Za-z0-9_-]{43})/.exec(mail?.text ?? '')?.[1];
  assert.ok(copyToken, 'the completion mail carries a copy link');
  const sealed = await e.h.app.inject({
    method: 'GET',
    url: `/v1/documents/${r.json.document_id}/signed`,
    headers: { authorization: `Bearer ${e.token}` },
  });
  return { documentId: r.json.document_id as string, signToken, copyToken, sealed: sealed.rawPayload };
}

async function open(context: BrowserContext, url: string, problems: string[], lang = 'de'): Promise<Page> {
  const page = await context.newPage();
  await page.setExtraHTTPHeaders({ 'accept-language': lang });
  watchPage(page, url, problems);
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
  });
  const res = await page.goto(url);
  console.error('DEBUG', url, res?.status(), new Date().toISOString());
  return page;
}

/** Clicks a link and returns the file the browser saved. */
async function download(page: Page, name: string | RegExp): Promise<{ bytes: Buffer; suggested: string }> {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]);
  return { bytes: await downloadBytes(d), suggested: d.suggestedFilename() };
}

test(
  "the signer's copy page in Chromium: plain links without JavaScript, axe-clean",
  { skip, timeout: 90_000 },
  async (t) => {
    assert.ok(fs.existsSync(CHROMIUM), `CI=true and no Chromium at ${CHROMIUM}`);
    const e = await startE2E();
    const browser = await launchChromium();
    const noJs = await launchChromium({ javaScriptEnabled: false });
    const problems: string[] = [];
    const serious: string[] = [];
    try {
      const c = await completedDocument(e);
      const url = e.h.url(`/copy/${c.copyToken}`);

      // Without JavaScript: the page reads in German and both files download.
      const page = await open(noJs.context, url, problems);
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Rahmenvertrag Müller (2026)');
      const pdf = await download(page, 'Unterschriebenes Dokument (PDF)');
      assert.ok(pdf.bytes.equals(c.sealed), 'the downloaded PDF is the sealed file byte for byte');
      assert.equal(pdf.suggested, 'Rahmenvertrag Müller (2026)-signed.pdf');
      const cert = await download(page, 'Prüfprotokoll (PDF)');
      assert.ok(cert.bytes.subarray(0, 5).equals(Buffer.from('%PDF-')), 'the audit certificate is a PDF');
      assert.equal(cert.suggested, 'Rahmenvertrag Müller (2026)-audit.pdf');
      const shot = path.join(SHOTS, `signet-copy-page-${process.pid}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      t.diagnostic(`screenshot: ${shot}`);

      // With JavaScript (axe runs in the page): the copy page, narrow too, then the expired and signer pages.
      const withJs = await open(browser.context, url, problems);
      serious.push(...(await axe(withJs, t, 'copy page')));
      await withJs.setViewportSize({ width: 360, height: 740 });
      assert.ok(
        await withJs.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
        'no sideways scrolling at 360 px',
      );
      await withJs.screenshot({ path: path.join(SHOTS, `signet-copy-page-360-${process.pid}.png`), fullPage: true });

      const signer = await open(browser.context, e.h.url(`/sign/${c.signToken}`), problems, 'en');
      assert.equal(await signer.locator('body').getAttribute('data-state'), 'signed');
      serious.push(...(await axe(signer, t, 'signer page, completed')));
      const fromSigner = await download(signer, 'Download the signed document (PDF)');
      assert.ok(fromSigner.bytes.equals(c.sealed), 'the signer page serves the sealed file');
      await signer.screenshot({ path: path.join(SHOTS, `signet-signer-completed-${process.pid}.png`) });

      assert.deepEqual(problems, []);
      e.h.clock.set(e.h.clock.now() + 31 * 24 * 3600_000);
      const expired = await open(browser.context, url, problems, 'fr');
      assert.match(await expired.locator('#status').innerText(), /Ce lien de téléchargement a expiré/);
      serious.push(...(await axe(expired, t, 'expired copy page')));

      // The expired page answers 404 on purpose; the browser logs that, and nothing else.
      assert.deepEqual(problems, [
        `404 ${url}`,
        'console: Failed to load resource: the server responded with a status of 404 (Not Found)',
      ]);
      assert.deepEqual(serious, []);
    } finally {
      await noJs.close();
      await browser.close();
      await e.close();
    }
  },
);
