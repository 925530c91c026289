// signet.js in Chromium, its API: the one global, what mount builds, what unmount removes, what mount refuses.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  HOST,
  SESSION_A,
  SESSION_B,
  TOKEN_A,
  calls,
  events,
  frameReferers,
  height,
  messageListeners,
  mount,
  msg,
  openHost,
  post,
  skip,
  useHelperBrowser,
} from './testing/signet-helper.js';

useHelperBrowser();

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
