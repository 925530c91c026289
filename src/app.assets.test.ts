// Every feature's asset table, as app.ts composes them: each file named exists and is served, so a wrong path in a
// table fails here rather than on a page (a wrong name already fails to compile: web/assets.ts, AssetNames).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { AssetName } from './web/assets.js';
import { startHarness, type Harness } from './testing/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('every composed asset is served: files by their versioned URL, folders by one of their files', async () => {
  const names = h.app.assets.names as AssetName[];
  assert.ok(names.length >= 18, names.join(' '));
  for (const name of names) {
    const url = h.app.assets.url(name);
    if (name.endsWith('/')) {
      assert.equal(url, `/assets/${name}`);
      continue;
    }
    const r = await h.request('GET', url);
    assert.equal(r.status, 200, `${name}: ${r.status}`);
    assert.ok(r.text.length > 0, `${name} is empty`);
    assert.match(r.headers['cache-control']!, /immutable/, name);
  }
  // The pdf.js folders the pages point pdf.js at.
  for (const url of ['/assets/pdfjs/standard_fonts/FoxitFixed.pfb', '/assets/pdfjs/cmaps/UniJIS-UCS2-H.bcmap'])
    assert.equal((await h.request('GET', url)).status, 200, url);
});
