// Debian's Chromium for page tests, started one way: headless, no network side-traffic, a fresh profile; each test
// works in a browser context of its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Download, type Frame, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// Locally a missing browser only skips; on CI it must fail, so the suite cannot go green without browser tests.
export const skipWithoutChromium: string | false =
  !fs.existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `no Chromium at ${CHROMIUM} (apt-get install chromium)`
    : false;

/** A phone: 360×740 CSS pixels, touch, `isMobile` (the viewport meta tag applies), twice the pixel density. */
export const PHONE = { width: 360, height: 740 } as const;

/** How every Chromium here starts: headless, no network side-traffic (the profile is always a fresh one). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
] as const;

/** The run's shared browser (src/testing/browser-server.ts), when scripts/test.sh started one. */
const SHARED_ENDPOINT = 'SIGNET_TEST_CHROMIUM_WS';

/**
 * A fresh browser context. Under `npm test` it is a new context in the run's one Chromium (connecting costs about a
 * third of a launch, and some 30 files each launched their own); a context shares no cookies, storage or cache with
 * another. Otherwise (one file run by hand, or the shared one unreachable) Chromium is launched with a fresh profile.
 * Downloads: read them with `downloadBytes`, which works on both.
 */
export async function launchChromium(
  o: { javaScriptEnabled?: boolean; phone?: boolean } = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const options = {
    viewport: o.phone ? PHONE : { width: 1280, height: 900 },
    ...(o.phone ? { hasTouch: true, isMobile: true, deviceScaleFactor: 2 } : {}),
    javaScriptEnabled: o.javaScriptEnabled ?? true,
  };
  const shared = await connectShared();
  if (shared) {
    const context = await shared.newContext(options);
    return {
      context,
      async close() {
        await context.close();
        await shared.close();
      },
    };
  }
  // Playwright takes the profile as launchPersistentContext's argument, not as --user-data-dir.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS],
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

async function connectShared(): Promise<Browser | undefined> {
  const endpoint = process.env[SHARED_ENDPOINT];
  if (!endpoint) return undefined;
  try {
    return await chromium.connect(endpoint, { timeout: 15_000 });
  } catch (err) {
    process.emitWarning(`the run's shared Chromium is unreachable (${(err as Error).message}); launching one`);
    return undefined;
  }
}

/** A download's bytes, whether the browser is local or a remote one (where `download.path()` is not available). */
export async function downloadBytes(d: Download): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await d.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// axe-core is a devDependency: the audit always runs.
const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
// Its 650 KB took about 0.2 s to cross the DevTools protocol on every audit, ten times what evaluating it in the page
// takes. So once a context has been audited, each new document in it gets the source as a string (an init script,
// sent once), and an audit evaluates that string in the page.
const AXE_SOURCE_GLOBAL = '__signetAxeSource';
const axeContexts = new WeakSet<BrowserContext>();

/** Serious and critical axe violations of the page (or frame) as it is now; every violation goes to the diagnostics. */
export async function axe(page: Page | Frame, t: { diagnostic(m: string): void }, label: string): Promise<string[]> {
  const context = ('context' in page ? page : page.page()).context();
  if (!axeContexts.has(context)) {
    axeContexts.add(context);
    await context.addInitScript({ content: `globalThis.${AXE_SOURCE_GLOBAL} = ${JSON.stringify(axeSource)};` });
  }
  // Evaluated through the DevTools protocol, so the page's CSP (no inline scripts) does not stop it. A document
  // from before the init script (or without JavaScript) gets the source sent whole.
  const loaded = await page.evaluate((name) => {
    const source = (globalThis as any)[name];
    if (typeof source !== 'string') return false;
    (0, eval)(source);
    return true;
  }, AXE_SOURCE_GLOBAL);
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return (r.violations as any[]).map((v) => ({
      id: v.id as string,
      impact: v.impact as string,
      help: v.help as string,
      nodes: (v.nodes as any[]).map((n) => String(n.target)).slice(0, 3),
    }));
  });
  t.diagnostic(`${label}: axe-core found ${violations.length} violation(s)`);
  for (const v of violations) t.diagnostic(`${label}: axe ${v.impact} ${v.id}: ${v.help} (${v.nodes.join(' | ')})`);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${label}: ${v.id} ${v.nodes.join(' | ')}`);
}

/**
 * Records into `problems` what a page must never do: a script error, a console error, or a request to anywhere but
 * `origin` (every asset ships with Signet). Tests assert the list stays empty. `expectedErrors`: console errors a test
 * causes on purpose, e.g. Chromium's line for a refused form's 400. `inline`: `data:` and `blob:` URLs are the page's own
 * (a drawn signature, an uploaded logo's preview).
 */
export function watchPage(
  page: Page,
  origin: string,
  problems: Pick<string[], 'push'>,
  o: { expectedErrors?: RegExp; inline?: boolean } = {},
): void {
  const own = new URL(origin).origin;
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !o.expectedErrors?.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.origin === own || (o.inline && (url.protocol === 'data:' || url.protocol === 'blob:'))) return;
    problems.push(`third-party request: ${r.url()}`);
  });
}

// Each context's one tab, and the list its problems go to now.
const tabs = new WeakMap<BrowserContext, { page: Page; problems: string[] }>();

/**
 * Opens `url` in the context's one tab, as a person would in one browser tab: a new tab costs Chromium a renderer
 * process and Playwright its setup, on a slow machine about half a second of CPU, more than drawing the page
 * (BENCHMARKS.md, "page tests in one tab"). The tab is made on first use, when `watch` sets up what it records
 * (through `sink`, which adds to the `problems` of the latest call); the context closes it, the caller does not.
 */
export async function openInTab(
  context: BrowserContext,
  url: string,
  problems: string[],
  watch: (page: Page, sink: Pick<string[], 'push'>) => void,
) {
  let tab = tabs.get(context);
  if (tab === undefined || tab.page.isClosed()) {
    const t = { page: await context.newPage(), problems };
    watch(t.page, { push: (...lines) => t.problems.push(...lines) });
    tabs.set(context, (tab = t));
  }
  tab.problems = problems;
  return { page: tab.page, response: await tab.page.goto(url) };
}

/** Chromium's console line for a response a test asks for on purpose (a refused form, a wrong password, a 404). */
export const statusLine = (...codes: number[]) =>
  new RegExp(`the server responded with a status of (${codes.join('|')})\\b`);

/**
 * A page test's record of what it looked at: each `look` runs axe (its serious violations collect in `serious`, which
 * the test asserts empty) and takes a screenshot numbered in order, in a temporary folder of its own (`dir`, named in
 * the test's diagnostics), or in `$SIGNET_SHOTS/<name>` when that is set (to keep a run's screenshots in one place).
 */
export function pageShots(name: string) {
  const keep = process.env.SIGNET_SHOTS;
  const dir = keep ? path.join(keep, name) : fs.mkdtempSync(path.join(os.tmpdir(), `signet-${name}-shots-`));
  fs.mkdirSync(dir, { recursive: true });
  const serious: string[] = [];
  let n = 0;
  /** The next numbered file name in the folder. */
  const next = (label: string) => path.join(dir, `${String(++n).padStart(2, '0')}-${label}.png`);
  return {
    dir,
    serious,
    next,
    /** axe on the page as it is (it needs JavaScript: `audit: false` where it is off), then a screenshot. */
    async look(page: Page, t: { diagnostic(m: string): void }, label: string, o: { audit?: boolean } = {}) {
      if (o.audit !== false) serious.push(...(await axe(page, t, label)));
      await page.screenshot({ path: next(label), fullPage: true });
    },
  };
}
