// signet.js, the host-page helper of embedded signing, in Debian's Chromium. No server of ours: Playwright's routing
// serves a host page on https://host.example, the helper and fake signing pages on https://signet.test, and a forging
// page on https://evil.example. The fake signing page posts whatever the test hands it, so each test states exactly
// which messages reach the host's callbacks and which are dropped.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { CHROMIUM, launchChromium, skipWithoutChromium } from '../testing/browser.js';
import type { MountOptions, Mounted, SignetMessage } from './assets/signet.js';

const skip = skipWithoutChromium;
const HELPER = fs.readFileSync(new URL('./assets/signet.js', import.meta.url), 'utf8');

const HOST = 'https://host.example';
const SIGNET = 'https://signet.test';
const TOKEN_A = 'A'.repeat(22) + '_-' + 'a'.repeat(19);
const TOKEN_B = 'B'.repeat(22) + '_-' + 'b'.repeat(19);
const SESSION_A = `${SIGNET}/embed/sign/${TOKEN_A}`;
const SESSION_B = `${SIGNET}/embed/sign/${TOKEN_B}`;
const OTHER = `${SIGNET}/other`; // right origin, but not a frame the helper mounted
const EVIL_ORIGIN = 'https://evil.example';
const EVIL = `${EVIL_ORIGIN}/frame`;

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

type Recorded = { name: string; cb: string; msg: SignetMessage };

const msg = <T extends SignetMessage['type']>(
  type: T,
  data: Record<string, unknown> = {},
  ids = { session_id: 'ses_A', signing_request_id: 'sr_A' },
) => ({ source: 'signet', version: 1, type, ...ids, data }) as SignetMessage<T>;

let context: BrowserContext;
let close: () => Promise<void>;
const frameReferers: (string | null)[] = [];

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

/** A fresh host page, with the page errors it reports; closed when the test ends. */
async function openHost(t: { after(fn: () => Promise<void>): void }, path = '/checkout?order=42') {
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
async function ready(frame: Frame): Promise<Frame> {
  await frame.waitForFunction(() => typeof (window as any).post === 'function');
  return frame;
}

/**
 * Mounts `url` in `#${name}` with every callback recording into `window.events`; returns the iframe's Frame. The
 * callbacks are written against signet.d.ts, so typecheck checks the declarations too.
 */
async function mount(page: Page, name: string, url: string, extra: { title?: string; height?: number | string } = {}) {
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

const events = (page: Page) => page.evaluate(() => (window as any).events as Recorded[]);
const messageListeners = (page: Page) => page.evaluate(() => (window as any).messageListeners as number);
const height = (page: Page, sel: string) =>
  page.locator(sel).evaluate((el) => Math.round(el.getBoundingClientRect().height * 100) / 100);

/** Posts `m` from `frame` (to the host's origin unless told) and waits until the host window has received it. */
async function post(page: Page, frame: Frame | 'host', m: unknown, target?: string) {
  const n = await page.evaluate(() => (window as any).raw.length as number);
  if (frame === 'host') await page.evaluate((m) => window.postMessage(m, '*'), m);
  else await frame.evaluate(([m, target]) => (window as any).post(m, target), [m, target] as const);
  // Listeners run in one dispatch: once the recorder has it, the helper has had it too.
  await page.waitForFunction((n) => (window as any).raw.length > n, n);
}

/** The callbacks events recorded for one message, in call order. */
const calls = (evs: Recorded[]) => evs.map((e) => `${e.name}.${e.cb}:${e.msg.type}`);

describe('signet.js in Chromium', { skip, timeout: 60_000 }, () => {
  test('loads as a classic script and defines only window.Signet, version 1', async (t) => {
    const { page, errors } = await openHost(t);
    const got = await page.evaluate(() => {
      const before = new Set((window as any).hostKeys as string[]);
      return {
        // Numeric keys are the page's own frames (window[0], window[1]).
        added: Object.getOwnPropertyNames(window).filter((k) => !before.has(k) && k !== 'hostKeys' && !/^\d+$/.test(k)),
        version: Signet.version,
        mount: typeof Signet.mount,
        frozen: Object.isFrozen(Signet),
      };
    });
    assert.deepEqual(got, { added: ['Signet'], version: 1, mount: 'function', frozen: true });
    assert.deepEqual(errors, []);
  });

  test('mount appends a plain iframe: src, title, no permissions, origin-only referrer, full width, 600px', async (t) => {
    const { page, errors } = await openHost(t);
    const before = frameReferers.length;
    await mount(page, 'a', SESSION_A);
    const iframe = await page.locator('#a > iframe').evaluate((f: HTMLIFrameElement) => ({
      src: f.src,
      title: f.title,
      allow: f.getAttribute('allow'),
      referrerPolicy: f.referrerPolicy,
      display: getComputedStyle(f).display,
      border: getComputedStyle(f).borderTopWidth,
      width: f.getBoundingClientRect().width,
      height: f.getBoundingClientRect().height,
      isReturned: f === (window as any).mounts.a.iframe,
    }));
    assert.deepEqual(iframe, {
      src: SESSION_A,
      title: 'Document signing',
      allow: '',
      referrerPolicy: 'origin',
      display: 'block',
      border: '0px',
      width: 640,
      height: 600,
      isReturned: true,
    });
    // The host's path and query stay on the host.
    assert.deepEqual(frameReferers.slice(before), [`${HOST}/`]);

    await mount(page, 'b', SESSION_B, { title: 'Sign the lease', height: 320 });
    assert.equal(await page.locator('#b > iframe').getAttribute('title'), 'Sign the lease');
    assert.equal(await height(page, '#b > iframe'), 320);
    assert.deepEqual(errors, []);
  });

  test('ready, viewed and signed reach their callbacks, then onEvent, with the whole message', async (t) => {
    const { page, errors } = await openHost(t);
    const frame = await mount(page, 'a', SESSION_A);
    const sent = [
      msg('ready'),
      msg('viewed', { at: '2026-01-02T03:04:05Z' }),
      msg('signed', { signed_at: '2026-01-02T03:05:00Z' }),
    ];
    for (const m of sent) await post(page, frame, m);
    const evs = await events(page);
    assert.deepEqual(calls(evs), [
      'a.onReady:ready',
      'a.onEvent:ready',
      'a.onViewed:viewed',
      'a.onEvent:viewed',
      'a.onSigned:signed',
      'a.onEvent:signed',
    ]);
    assert.deepEqual(
      evs.map((e) => e.msg),
      sent.flatMap((m) => [m, m]),
    );
    assert.deepEqual(errors, []);
  });

  test('declined, expired and error carry their data to their callbacks', async (t) => {
    const { page } = await openHost(t);
    const a = await mount(page, 'a', SESSION_A);
    const b = await mount(page, 'b', SESSION_B);
    await post(page, a, msg('error', { code: 'document_unavailable' }));
    await post(page, a, msg('declined', { reason: 'Wrong amount' }));
    await post(page, b, msg('expired'));
    assert.deepEqual(calls(await events(page)), [
      'a.onError:document_unavailable:error',
      'a.onEvent:error',
      'a.onDeclined:Wrong amount:declined',
      'a.onEvent:declined',
      'b.onExpired:expired',
      'b.onEvent:expired',
    ]);
  });

  test('resize sets the iframe height; nonsense heights are not applied and huge ones are capped', async (t) => {
    const { page } = await openHost(t);
    const frame = await mount(page, 'a', SESSION_A);
    assert.equal(await height(page, '#a > iframe'), 600);
    await post(page, frame, msg('resize', { height: 1234.5 }));
    assert.equal(await height(page, '#a > iframe'), 1234.5);
    for (const bad of [-1, NaN, Infinity, '900', null, undefined]) {
      await post(page, frame, msg('resize', { height: bad }));
      assert.equal(await height(page, '#a > iframe'), 1234.5, `height ${String(bad)} was applied`);
    }
    await post(page, frame, { ...msg('resize'), data: null });
    await post(page, frame, msg('resize', { height: 0 }));
    assert.equal(await height(page, '#a > iframe'), 0);
    await post(page, frame, msg('resize', { height: 5e9 }));
    assert.equal(await height(page, '#a > iframe'), 100000);
    // resize has no callback of its own; onEvent sees each one.
    assert.deepEqual(new Set(calls(await events(page))), new Set(['a.onEvent:resize']));
    assert.equal((await events(page)).length, 10);
  });

  test('forged messages are ignored: another origin, an unmounted Signet frame, the host page itself', async (t) => {
    const { page, errors } = await openHost(t);
    const frame = await mount(page, 'a', SESSION_A);
    const evil = page.frame({ url: EVIL })!;
    const other = page.frame({ url: OTHER })!;
    for (const m of [msg('signed'), msg('resize', { height: 50 })]) {
      await post(page, evil, m); // right shape, wrong origin and wrong window
      await post(page, evil, m, '*');
      await post(page, other, m); // right origin, wrong window
      await post(page, 'host', m); // the host page's own scripts (or anything injected into it)
    }
    const raw = await page.evaluate(() => (window as any).raw as { origin: string }[]);
    assert.deepEqual(
      raw.map((r) => r.origin),
      [EVIL_ORIGIN, EVIL_ORIGIN, SIGNET, HOST, EVIL_ORIGIN, EVIL_ORIGIN, SIGNET, HOST],
      'every forgery was delivered to the host window',
    );
    assert.deepEqual(await events(page), []);
    assert.equal(await height(page, '#a > iframe'), 600);

    // The real frame is still heard, and a forged outcome did not end the session.
    await post(page, frame, msg('declined', { reason: 'no' }));
    assert.deepEqual(calls(await events(page)), ['a.onDeclined:no:declined', 'a.onEvent:declined']);
    assert.deepEqual(errors, []);
  });

  test('once the mounted frame navigates to another origin, its messages are ignored', async (t) => {
    const { page, errors } = await openHost(t);
    const frame = await mount(page, 'a', SESSION_A);
    await post(page, frame, msg('ready'));
    // Same iframe, same window object, so only the origin check stands between this page and the host.
    await frame.goto(EVIL);
    await ready(frame);
    for (const m of [msg('viewed'), msg('resize', { height: 50 }), msg('signed')]) await post(page, frame, m);
    const raw = await page.evaluate(() => (window as any).raw as { origin: string }[]);
    assert.deepEqual(
      raw.map((r) => r.origin),
      [SIGNET, EVIL_ORIGIN, EVIL_ORIGIN, EVIL_ORIGIN],
    );
    assert.deepEqual(calls(await events(page)), ['a.onReady:ready', 'a.onEvent:ready']);
    assert.equal(await height(page, '#a > iframe'), 600);
    assert.deepEqual(errors, []);
  });

  test('messages of the wrong shape, version or type are ignored', async (t) => {
    const { page } = await openHost(t);
    const frame = await mount(page, 'a', SESSION_A);
    const good = msg('ready');
    const bad: unknown[] = [
      null,
      'signet',
      42,
      [good],
      JSON.stringify(good),
      { ...good, source: 'Signet' },
      { ...good, source: undefined },
      { ...good, version: 2 },
      { ...good, version: '1' },
      { ...good, version: undefined },
      { ...good, type: 'done' },
      { ...good, type: 'toString' },
      { ...good, type: 'hasOwnProperty' },
      { ...good, type: '__proto__' },
      { ...good, type: 'READY' },
      { ...good, type: undefined },
      { ...msg('signed'), version: 2 },
      { ...msg('resize', { height: 10 }), source: 'other' },
    ];
    for (const m of bad) await post(page, frame, m);
    assert.deepEqual(await events(page), []);
    assert.equal(await height(page, '#a > iframe'), 600);
    await post(page, frame, good);
    assert.deepEqual(calls(await events(page)), ['a.onReady:ready', 'a.onEvent:ready']);
  });

  test('after an outcome, no other outcome or error is delivered; resize, ready and viewed still are', async (t) => {
    const { page } = await openHost(t);
    const a = await mount(page, 'a', SESSION_A);
    const b = await mount(page, 'b', SESSION_B);

    // An error is not an outcome: the signer may retry and sign.
    await post(page, a, msg('error', { code: 'network' }));
    await post(page, a, msg('signed'));
    for (const type of ['error', 'signed', 'declined', 'expired'] as const)
      await post(page, a, msg(type, type === 'error' ? { code: 'late' } : {}));
    await post(page, a, msg('resize', { height: 700 }));
    await post(page, a, msg('viewed'));

    await post(page, b, msg('declined', { reason: 'first' }));
    await post(page, b, msg('signed'));
    await post(page, b, msg('declined', { reason: 'second' }));

    assert.deepEqual(calls(await events(page)), [
      'a.onError:network:error',
      'a.onEvent:error',
      'a.onSigned:signed',
      'a.onEvent:signed',
      'a.onEvent:resize',
      'a.onViewed:viewed',
      'a.onEvent:viewed',
      'b.onDeclined:first:declined',
      'b.onEvent:declined',
    ]);
    assert.equal(await height(page, '#a > iframe'), 700);
  });

  test('a throwing callback is reported as a page error and breaks nothing', async (t) => {
    const { page, errors } = await openHost(t);
    await page.evaluate((url) => {
      const w = window as unknown as { events: string[] };
      Signet.mount('#a', url, {
        onReady() {
          throw new Error('host bug in onReady');
        },
        onSigned() {
          throw new Error('host bug in onSigned');
        },
        onEvent(m) {
          w.events.push(m.type);
          if (m.type === 'viewed') throw new Error('host bug in onEvent');
        },
      });
    }, SESSION_A);
    const frame = await ready((await (await page.locator('#a iframe').elementHandle())!.contentFrame())!);
    for (const type of ['ready', 'viewed', 'signed', 'error'] as const) await post(page, frame, msg(type));
    await post(page, frame, msg('resize', { height: 200 }));
    assert.deepEqual(await page.evaluate(() => (window as any).events), ['ready', 'viewed', 'signed', 'resize']);
    assert.equal(await height(page, '#a > iframe'), 200);
    // Rethrown from a timer, so they arrive a little later.
    for (let i = 0; errors.length < 3 && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(errors.sort(), ['host bug in onEvent', 'host bug in onReady', 'host bug in onSigned']);
  });

  test('two mounts are independent: each hears only its own frame', async (t) => {
    const { page } = await openHost(t);
    const a = await mount(page, 'a', SESSION_A);
    const b = await mount(page, 'b', SESSION_B);
    const idsB = { session_id: 'ses_B', signing_request_id: 'sr_B' };
    await post(page, a, msg('ready'));
    await post(page, b, msg('ready', {}, idsB));
    await post(page, a, msg('resize', { height: 111 }));
    await post(page, b, msg('resize', { height: 222 }, idsB));
    await post(page, a, msg('signed'));
    await post(page, b, msg('declined', { reason: 'b' }, idsB));
    const evs = await events(page);
    assert.deepEqual(calls(evs), [
      'a.onReady:ready',
      'a.onEvent:ready',
      'b.onReady:ready',
      'b.onEvent:ready',
      'a.onEvent:resize',
      'b.onEvent:resize',
      'a.onSigned:signed',
      'a.onEvent:signed',
      'b.onDeclined:b:declined',
      'b.onEvent:declined',
    ]);
    assert.ok(
      evs.every((e) => e.msg.session_id === (e.name === 'a' ? 'ses_A' : 'ses_B')),
      JSON.stringify(evs),
    );
    assert.equal(await height(page, '#a > iframe'), 111);
    assert.equal(await height(page, '#b > iframe'), 222);
  });

  test('unmount removes the iframe and the listener, is idempotent, and leaves other mounts alone', async (t) => {
    const { page, errors } = await openHost(t);
    const listeners = await messageListeners(page);
    const a = await mount(page, 'a', SESSION_A);
    const b = await mount(page, 'b', SESSION_B);
    assert.equal(await messageListeners(page), listeners + 2);
    await post(page, a, msg('ready'));

    await page.evaluate(() => (window as any).mounts.a.unmount());
    assert.equal(await page.locator('#a iframe').count(), 0);
    assert.equal(a.isDetached(), true);
    assert.equal(await messageListeners(page), listeners + 1);
    await page.evaluate(() => (window as any).mounts.a.unmount());
    assert.equal(await messageListeners(page), listeners + 1);

    await post(page, b, msg('signed'));
    assert.deepEqual(calls(await events(page)), [
      'a.onReady:ready',
      'a.onEvent:ready',
      'b.onSigned:signed',
      'b.onEvent:signed',
    ]);
    await page.evaluate(() => (window as any).mounts.b.unmount());
    assert.equal(await messageListeners(page), listeners);
    assert.equal(await page.locator('iframe').count(), 2, 'only the evil and other frames are left');
    assert.deepEqual(errors, []);
  });

  test('mount throws a TypeError for a missing element or a URL that is not absolute http(s)', async (t) => {
    const { page } = await openHost(t);
    const listeners = await messageListeners(page);
    const cases: [unknown, unknown][] = [
      ['#nowhere', SESSION_A],
      ['#a[', SESSION_A], // invalid selector
      [null, SESSION_A],
      [{}, SESSION_A],
      ['#a', '/embed/sign/' + TOKEN_A],
      ['#a', 'signet.test/embed/sign/' + TOKEN_A],
      ['#a', 'javascript:alert(1)'],
      ['#a', 'data:text/html,<p>hi</p>'],
      ['#a', 'ftp://signet.test/embed/sign/x'],
      ['#a', ''],
      ['#a', undefined],
    ];
    const got = await page.evaluate((cases) => {
      return cases.map(([el, url]) => {
        try {
          Signet.mount(el as string, url as string);
          return 'no error';
        } catch (e) {
          // Our own TypeError, not one from using a null element or a bad URL further on.
          return e instanceof TypeError && e.message.startsWith('Signet.mount: ') ? 'TypeError' : String(e);
        }
      });
    }, cases);
    assert.deepEqual(got, Array(cases.length).fill('TypeError'));
    assert.equal(await page.locator('#a iframe, #b iframe').count(), 0);
    assert.equal(await messageListeners(page), listeners);

    // A selector and an element both work; http is allowed (a local Signet).
    const ok = await page.evaluate(() => {
      const m1 = Signet.mount(document.getElementById('b')!, 'http://localhost:3000/embed/sign/x');
      const m2 = Signet.mount('#a', new URL('https://signet.test/embed/sign/y'));
      const r = [m1.iframe.parentElement!.id, m2.iframe.parentElement!.id];
      m1.unmount();
      m2.unmount();
      return r;
    });
    assert.deepEqual(ok, ['b', 'a']);
  });
});
