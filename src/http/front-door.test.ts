// The front door: a browser opening BASE_URL reaches the dashboard's sign-in, where the API reference and the verify
// page are linked; an API client gets the catalogue's 404. The real app on a real port.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => h?.close());

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

test('a browser at / is sent to the dashboard, whose sign-in links /docs and /verify', async () => {
  const root = await h.request('GET', '/', { headers: { accept: BROWSER } });
  assert.equal(root.status, 303);
  assert.equal(root.headers.location, '/dashboard');
  const dash = await h.request('GET', '/dashboard', { headers: { accept: BROWSER } });
  assert.equal(dash.status, 303);
  const signIn = await h.request('GET', dash.headers.location!, { headers: { accept: BROWSER } });
  assert.equal(signIn.status, 200);
  assert.match(signIn.text, /<a href="\/docs">API reference<\/a>/);
  assert.match(signIn.text, /<a href="\/verify">Verify a signed PDF<\/a>/);
  const de = await h.request('GET', dash.headers.location!, { headers: { accept: BROWSER, 'accept-language': 'de' } });
  assert.match(de.text, /API-Referenz/, 'in the visitor’s language');
});

test('an API client at / gets the catalogue’s 404', async () => {
  for (const accept of ['application/json', '*/*', '']) {
    const r = await h.request('GET', '/', { headers: accept ? { accept } : {} });
    assert.equal(r.status, 404, accept);
    assert.equal(r.json.code, 'not_found');
  }
});
