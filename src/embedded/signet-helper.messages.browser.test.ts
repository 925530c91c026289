// signet.js in Chromium, the messages it delivers: each type to its callback, resize, outcomes, throwing callbacks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  SESSION_A,
  SESSION_B,
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
});
