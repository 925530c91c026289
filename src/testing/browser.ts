// Debian's Chromium for page tests, launched one way: headless, no network side-traffic, a fresh profile per run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// Locally a missing browser only skips; on CI it must fail, so the suite cannot go green without browser tests.
export const skipWithoutChromium: string | false =
  !fs.existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `no Chromium at ${CHROMIUM} (apt-get install chromium)`
    : false;

export async function launchChromium(
  o: { javaScriptEnabled?: boolean } = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // Playwright takes the profile as launchPersistentContext's argument, not as --user-data-dir.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
    viewport: { width: 1280, height: 900 },
    javaScriptEnabled: o.javaScriptEnabled ?? true,
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
