// signet.js in Chromium, the messages it ignores: forged, from a frame gone to another origin, of the wrong shape.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  EVIL,
  EVIL_ORIGIN,
  HOST,
  OTHER,
  SESSION_A,
  SIGNET,
  calls,
  events,
  height,
  mount,
  msg,
  openHost,
  post,
  ready,
  skip,
  useHelperBrowser,
} from './testing/signet-helper.js';

useHelperBrowser();

describe('signet.js in Chromium', { skip, timeout: 60_000 }, () => {
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
});
