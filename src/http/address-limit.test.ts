// The per-address limit on the pages and actions that need no API key, against the real server: one address
// flooding a signer page gets 429 after the limit (a readable page for a browser, the catalogue's JSON for the
// page's own calls), while another address and the /v1 API carry on; the next window admits it again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { startHarness, type Harness } from '../testing/harness.js';

const LIMIT = 12;
const html = { accept: 'text/html,application/xhtml+xml', 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' };

describe('per-address limit on key-less pages', () => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await startHarness({ env: { PUBLIC_RATE_LIMIT: String(LIMIT) } });
    token = (await h.tenant('business')).token;
  });
  after(() => h.close());

  test('a flood from one address: 429 after the limit; other addresses and /v1 are unaffected; the next window admits it', async () => {
    const page = (localAddress: string) => h.request('GET', '/sign/not-a-real-token', { headers: html, localAddress });
    for (let i = 0; i < LIMIT; i++) assert.equal((await page('127.0.0.1')).status, 404, `request ${i + 1}`);

    const refused = await page('127.0.0.1');
    assert.equal(refused.status, 429);
    assert.match(refused.headers['content-type']!, /text\/html/);
    assert.ok(
      Number(refused.headers['retry-after']) > 0 && Number(refused.headers['retry-after']) <= 60,
      "Number(refused.headers['retry-after']) > 0 && Number(refused.headers['retry-after']) <= 60",
    );
    assert.match(refused.text, /<html lang="de">/, 'in the language the browser asked for');
    assert.match(refused.text, /zu viele Anfragen/);
    assert.match(refused.text, new RegExp(`${refused.headers['retry-after']} Sekunden`));
    assert.equal(refused.headers['x-frame-options'], undefined, 'no signer data on it, nothing to protect');

    const action = await h.request('POST', '/sign/not-a-real-token/view', { localAddress: '127.0.0.1' });
    assert.equal(action.status, 429);
    assert.equal(action.json.code, 'rate_limited');
    assert.ok(Number(action.headers['retry-after']) > 0, "Number(action.headers['retry-after']) > 0");

    assert.equal((await page('127.0.0.2')).status, 404, 'another address has its own allowance');
    assert.equal((await h.request('GET', '/v1/me', { token, localAddress: '127.0.0.1' })).status, 200);
    const hooks = await h.request('GET', '/v1/hooks', { token, localAddress: '127.0.0.1' });
    assert.equal(hooks.status, 200, '/v1 keeps its own per-key limit only');
    assert.equal(hooks.headers['ratelimit-limit'], '60');

    h.clock.advance(60_000);
    assert.equal((await page('127.0.0.1')).status, 404, 'a new window');
  });
});

describe('the default per-address limit in ordinary use', () => {
  let e: E2E;
  before(async () => {
    e = await startE2E({ env: { PUBLIC_RATE_LIMIT: '' } });
  });
  after(() => e?.close());

  test('ten signers behind one address each open, read and sign their document within one minute', async () => {
    const pdf = b64(await makePdf({ text: [['Agreement']] }));
    for (let i = 0; i < 10; i++) {
      const email = `office${i}@example.com`;
      const r = await e.api('POST', '/v1/signing-requests', {
        signers: [{ role: 'signer', email, name: `Office ${i}` }],
        file: { name: 'a.pdf', content_base64: pdf },
        placement: 'auto_append',
      });
      assert.equal(r.status, 201, r.text);
      await e.work();
      const link = `/sign/${await e.linkFor(email)}`;
      for (const [method, path, body] of [
        ['GET', link, undefined],
        ['GET', `${link}/info`, undefined],
        ['GET', `${link}/document.pdf`, undefined],
        ['POST', `${link}/view`, undefined],
        ['POST', `${link}/sign`, { signature: { type: 'typed', text: `Office ${i}` } }],
      ] as const) {
        const res = await e.h.request(method, path, { body, headers: method === 'GET' ? html : {} });
        assert.equal(res.status, 200, `${method} ${path}: ${res.status}`);
      }
    }
  });
});
