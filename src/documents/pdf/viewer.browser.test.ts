// The sealed PDF as a person sees it: Chromium's own PDF viewer shows the B-LTA file exactly as it shows the file
// the seal left (the long-term revisions add nothing visible), and pdftoppm agrees page by page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ManualClock } from '../../lib/clock.js';
import { loadOrCreatePki } from '../../pki/pki.js';
import { tempDir } from '../../pki/testing/tools.js';
import { createValidationSource } from '../../pki/validation-data.js';
import { launchChromium, skipWithoutChromium } from '../../testing/browser.js';
import { makePdf } from './testing/fixtures.js';
import { sealPdf } from './seal.work.js';
import { pdfScratch } from './testing/tools.js';

test(
  'Chromium’s PDF viewer and pdftoppm show the B-LTA file as the seal left it',
  { skip: skipWithoutChromium },
  async (t) => {
    const dir = await tempDir();
    const tmp = await pdfScratch('signet-viewer-');
    const browser = await launchChromium();
    t.after(async () => {
      await browser.close();
      if (!process.env.KEEP_SCREENSHOTS) await tmp.cleanup();
      await dir.cleanup();
    });
    const clock = new ManualClock(Date.now());
    const pki = await loadOrCreatePki({ dataDir: dir.path, clock });
    const input = await makePdf({ pages: 2, text: [['Purchase contract', 'Buyer: Zoë Ångström'], ['Page two']] });
    const sealed = await sealPdf(input, {
      seal: pki.seal,
      tsa: pki.localTsa,
      clock,
      longTerm: { source: createValidationSource({ cas: [pki.ca], clock }), tsaIssuersDer: [pki.caCertDer] },
    });
    assert.equal(sealed.padesLevel, 'B-LTA');
    const sealRevisionEnd = sealed.pdf.indexOf(0x0a, Buffer.from(sealed.pdf).indexOf('%%EOF')) + 1;
    const sealedOnly = sealed.pdf.subarray(0, sealRevisionEnd);

    for (const page of [1, 2]) assert.deepEqual(tmp.render(sealed.pdf, page).px, tmp.render(sealedOnly, page).px);

    // Same file name in two folders, so the viewer's toolbar reads the same.
    const shot = async (bytes: Uint8Array, sub: string) => {
      const folder = path.join(dir.path, sub);
      mkdirSync(folder);
      const file = path.join(folder, 'contract.pdf');
      writeFileSync(file, bytes);
      const p = await browser.context.newPage();
      await p.setViewportSize({ width: 900, height: 1000 });
      await p.goto(pathToFileURL(file).href);
      // The viewer draws in steps, later on a loaded machine: the picture is the one that stops changing (two
      // screenshots a second apart alike), within 20 s, not whatever a fixed wait happened to catch.
      let png = await p.screenshot();
      for (const until = Date.now() + 20_000; Date.now() < until;) {
        await p.waitForTimeout(1000);
        const next = await p.screenshot();
        const settled = Buffer.from(next).equals(Buffer.from(png)) && next.length > 10_000;
        png = next;
        if (settled) break;
      }
      writeFileSync(path.join(tmp.path, `${sub}.png`), png);
      await p.close();
      return png;
    };
    const before = await shot(sealedOnly, 'sealed');
    const after = await shot(sealed.pdf, 'lta');
    t.diagnostic(`screenshots: ${tmp.path}/sealed.png and lta.png`);
    assert.ok(before.length > 10_000, 'the viewer drew something');
    assert.ok(Buffer.from(before).equals(Buffer.from(after)), 'the viewer shows the same pixels');
  },
);
