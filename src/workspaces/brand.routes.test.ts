// GET /brand/:workspace/logo/:token against the real app: the current logo's bytes with its type, nosniff, a policy
// that runs nothing and a year's immutable caching; an old token, a wrong workspace or no logo answer 404.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../testing/harness.js';
import { brandOf, logoToken } from './brand.js';
import { findWorkspace, setWorkspaceLogo } from './workspaces.repo.js';
import { solidPng } from './testing/images.js';

describe('the logo route', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  test('serves the current logo only, with safe headers', async () => {
    const ws = await h.workspace('business', 'Logo Co');
    const other = await h.workspace('business', 'Other Co');
    const png = solidPng(4, 4);
    const key = await h.runtime.blobs.put(png, 'logo');
    await setWorkspaceLogo(h.db.kysely, ws.id, { blob: key, type: 'image/png' });
    const brand = brandOf((await findWorkspace(h.db.kysely, ws.id))!);
    assert.equal(brand.logo?.path, `/brand/${ws.id}/logo/${logoToken(key)}`);
    assert.match(brand.logo!.path, /^\/brand\/ws_[0-9a-f]+\/logo\/[0-9a-f]{16}$/);

    const r = await h.request('GET', brand.logo!.path);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/png');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.match(r.headers['content-security-policy']!, /^default-src 'none'/);
    assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(Buffer.from(r.text, 'latin1').length > 0, true);

    assert.equal((await h.request('GET', `/brand/${other.id}/logo/${logoToken(key)}`)).status, 404, 'other workspace');
    assert.equal((await h.request('GET', `/brand/${ws.id}/logo/0000000000000000`)).status, 404, 'wrong token');
    assert.equal((await h.request('GET', `/brand/${ws.id}/logo/nothex`)).status, 404, 'bad token shape');

    const newKey = await h.runtime.blobs.put(png, 'logo');
    await setWorkspaceLogo(h.db.kysely, ws.id, { blob: newKey, type: 'image/png' });
    assert.equal((await h.request('GET', brand.logo!.path)).status, 404, 'the replaced logo’s address is gone');
    await setWorkspaceLogo(h.db.kysely, ws.id, null);
    assert.equal(brandOf((await findWorkspace(h.db.kysely, ws.id))!).logo, null);
    assert.equal((await h.request('GET', `/brand/${ws.id}/logo/${logoToken(newKey)}`)).status, 404, 'no logo');
  });
});
