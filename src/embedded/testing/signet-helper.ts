// Fixtures of the signet.js tests in Chromium: routed host, signing and forging pages, mounting, posting, recording.
//
// signet.js, the host-page helper of embedded signing, in Debian's Chromium. No server of ours: Playwright's routing
// serves a host page on https://host.example, the helper and fake signing pages on https://signet.test, and a forging
// page on https://evil.example. The fake signing page posts whatever the test hands it, so each test states exactly
// which messages reach the host's callbacks and which are dropped.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before } from 'node:test';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { CHROMIUM, launchChromium, skipWithoutChromium } from '../../testing/browser.js';
import type { MountOptions, Mounted, SignetMessage } from '../assets/signet.js';

export const skip = skipWithoutChromium;
const HELPER = fs.readFileSync(new URL('../assets/signet.js', import.meta.url), 'utf8');

export const HOST = 'https://host.example';
export const SIGNET = 'https://signet.test';
export const TOKEN_A = 'A'.repeat(22) + '_-' + 'a'.repeat(19);
export const TOKEN_B = 'B'.repeat(22) + '_-' + 'b'.repeat(19);
export const SESSION_A = `${SIGNET}/embed/sign/${TOKEN_A}`;
export const SESSION_B = `${SIGNET}/embed/sign/${TOKEN_B}`;
export const OTHER = `${SIGNET}/other`; // right origin, but not a frame the helper mounted
export const EVIL_ORIGIN = 'https://evil.example';
export const EVIL = `${EVIL_ORIGIN}/frame`;

// The host page: a recorder of every message the window receives (`raw`) and of every 'message' listener added,
// two containers, and the two frames that are not the helper's. The helper is loaded as a classic script.
const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host</title>
<script>
  window.raw = [];
  window.events = [];
  window.mounts = {};
  window.messageListeners = 0;
  const add = window.addEventListener.bind(window);
  const remove = window.removeEventListener.bind(window);
  window.addEventListener = (type, fn, o) => { if (type === 'message') messageListeners++; add(type, fn, o); };
  window.removeEventListener = (type, fn, o) => { if (type === 'message') messageListeners--; remove(type, fn, o); };
  add('message', (e) => raw.push({ origin: e.origin, data: e.data }));
  window.hostKeys = Object.getOwnPropertyNames(window);
</script>
<script src="${SIGNET}/embed/signet.js"></script>
</head><body>
<div id="a" style="width: 640px"></div>
<div id="b" style="width: 480px"></div>
<iframe id="evil" src="${EVIL}" title="evil"></iframe>
<iframe id="other" src="${OTHER}" title="other"></iframe>
</body></html>`;

// Stands in for the signing page: posts to its parent when the test says so.
const FRAME_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frame</title></head><body>
<p>frame</p>
<script>window.post = (msg, target) => parent.postMessage(msg, target || '${HOST}');</script>
</body></html>`;

export type Recorded = { name: string; cb: string; msg: SignetMessage };

export const msg = <T extends SignetMessage['type']>(
  type: T,
  data: Record<string, unknown> = {},
  ids = { session_id: 'ses_A', signing_request_id: 'sr_A' },
) => ({ source: 'signet', version: 1, type, ...ids, data }) as SignetMessage<T>;

let context: BrowserContext;
let close: () => Promise<void>;
export const frameReferers: (string | null)[] = [];

/** Chromium with the routes below, launched before the calling file's tests and closed after them. */
export function useHelperBrowser(): void {
  before(async () => {
    if (skip) return;
    assert.ok(fs.existsSync(CHROMIUM), `CI=true and no Chromium at ${CHROMIUM}`);
    ({ context, close } = await launchChromium());
    // The last registered route wins: anything not served below is refused, so nothing leaves the machine.
    await context.route('**/*', (r) => r.abort());
    const html = (body: string) => ({ status: 200, contentType: 'text/html; charset=utf-8', body });
    await context.route(`${HOST}/**`, (r) => r.fulfill(html(HOST_PAGE)));
    await context.route(`${SIGNET}/embed/signet.js`, (r) =>
      r.fulfill({ status: 200, contentType: 'application/javascript; charset=utf-8', body: HELPER }),
    );
    await context.route(`${SIGNET}/embed/sign/*`, async (r) => {
      frameReferers.push(await r.request().headerValue('referer'));
      await r.fulfill(html(FRAME_PAGE));
    });
    await context.route(OTHER, (r) => r.fulfill(html(FRAME_PAGE)));
    await context.route(EVIL, (r) => r.fulfill(html(FRAME_PAGE)));
  });

  after(async () => {
    await close?.();
  });
}

/** A fresh host page, with the page errors it reports; closed when the test ends. */
export async function openHost(t: { after(fn: () => Promise<void>): void }, path = '/checkout?order=42') {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.after(() => page.close());
  const res = await page.goto(HOST + path);
  assert.equal(res?.status(), 200);
  await ready(page.frame({ url: EVIL })!);
  await ready(page.frame({ url: OTHER })!);
  return { page, errors };
}

/** Waits until a fake signing page has loaded and can post. */
export async function ready(frame: Frame): Promise<Frame> {
  await frame.waitForFunction(() => typeof (window as any).post === 'function');
  return frame;
}

/**
 * Mounts `url` in `#${name}` with every callback recording into `window.events`; returns the iframe's Frame. The
 * callbacks are written against signet.d.ts, so typecheck checks the declarations too.
 */
export async function mount(
  page: Page,
  name: string,
  url: string,
  extra: { title?: string; height?: number | string } = {},
) {
  await page.evaluate(
    ({ name, url, extra }) => {
      // Methods, not arrow functions: tsx would wrap a named arrow in a `__name` helper the page does not have.
      const w = window as unknown as { events: Recorded[]; mounts: Record<string, Mounted> };
      const options: MountOptions = {
        ...extra,
        onReady(msg) {
          w.events.push({ name, cb: 'onReady', msg });
        },
        onViewed(msg) {
          w.events.push({ name, cb: 'onViewed', msg });
        },
        onSigned(msg) {
          w.events.push({ name, cb: 'onSigned', msg });
        },
        onDeclined(msg) {
          w.events.push({ name, cb: `onDeclined:${msg.data.reason}`, msg });
        },
        onExpired(msg) {
          w.events.push({ name, cb: 'onExpired', msg });
        },
        onError(msg) {
          w.events.push({ name, cb: `onError:${msg.data.code}`, msg });
        },
        onEvent(msg) {
          w.events.push({ name, cb: 'onEvent', msg });
        },
      };
      w.mounts[name] = Signet.mount(`#${name}`, url, options);
    },
    { name, url, extra },
  );
  const frame = await page.locator(`#${name} iframe`).elementHandle();
  return ready((await frame!.contentFrame())!);
}

export const events = (page: Page) => page.evaluate(() => (window as any).events as Recorded[]);
export const messageListeners = (page: Page) => page.evaluate(() => (window as any).messageListeners as number);
export const height = (page: Page, sel: string) =>
  page.locator(sel).evaluate((el) => Math.round(el.getBoundingClientRect().height * 100) / 100);

/** Posts `m` from `frame` (to the host's origin unless told) and waits until the host window has received it. */
export async function post(page: Page, frame: Frame | 'host', m: unknown, target?: string) {
  const n = await page.evaluate(() => (window as any).raw.length as number);
  if (frame === 'host') await page.evaluate((m) => window.postMessage(m, '*'), m);
  else await frame.evaluate(([m, target]) => (window as any).post(m, target), [m, target] as const);
  // Listeners run in one dispatch: once the recorder has it, the helper has had it too.
  await page.waitForFunction((n) => (window as any).raw.length > n, n);
}

/** The callbacks events recorded for one message, in call order. */
export const calls = (evs: Recorded[]) => evs.map((e) => `${e.name}.${e.cb}:${e.msg.type}`);
