// The asset route over a Fastify instance of its own, with tables of temporary files: what a feature's table gets.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import { registerAssets, type AssetName, type AssetTable } from './assets.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-assets-'));
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
  return path.join(dir, rel);
};
// Test tables' names are not the app's, so they are cast where a page would be typed.
const name = (n: string) => n as AssetName;

async function appWith(tables: AssetTable[]) {
  const app = Fastify();
  const assets = registerAssets(app, tables);
  await app.ready();
  return { app, assets };
}

describe('web/assets', () => {
  test('a file is read on first use, versioned by content, cached for a year, and answered 304 by ETag', async () => {
    const file = path.join(dir, 'late.js');
    const { app, assets } = await appWith([{ 'late.js': { file } }]);
    // Registered before the file exists: nothing was read at start.
    fs.writeFileSync(file, 'console.log(1);');
    const url = assets.url(name('late.js'));
    assert.match(url, /^\/assets\/late\.js\?v=[A-Za-z0-9_-]{12}$/);
    const r = await app.inject(url);
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, 'console.log(1);');
    assert.equal(r.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    const again = await app.inject({ url: '/assets/late.js', headers: { 'if-none-match': String(r.headers.etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    await app.close();
  });

  test('a patch is served and hashed; two tables cannot claim one name; unknown names are 404 or throw', async () => {
    const file = write('p/lib.js', 'fetch("https://cdn.example/x")');
    const patched = { 'lib.js': { file, patch: (t: string) => t.replace('https://cdn.example/x', 'data:,') } };
    const { app, assets } = await appWith([patched, { 'own.css': { file: write('own.css', 'a{}') } }]);
    assert.equal((await app.inject(assets.url(name('lib.js')))).body, 'fetch("data:,")');
    assert.equal((await app.inject('/assets/own.css')).headers['content-type'], 'text/css; charset=utf-8');
    assert.equal((await app.inject('/assets/nope.js')).statusCode, 404);
    assert.equal((await app.inject('/assets/__proto__')).statusCode, 404);
    assert.throws(() => assets.url(name('nope.js')), /unknown asset "nope.js"/);
    assert.deepEqual(assets.names, ['lib.js', 'own.css']);
    await app.close();
    await assert.rejects(appWith([patched, { 'lib.js': { file } }]), /asset "lib.js" is named by two tables/);
  });

  test('a folder serves its files of known types under its prefix, unversioned', async () => {
    const folder = path.dirname(write('fonts/a.ttf', 'TTF'));
    write('fonts/b.exe', 'MZ');
    const { app, assets } = await appWith([{ 'lib/fonts/': { folder } }]);
    assert.equal(assets.url(name('lib/fonts/')), '/assets/lib/fonts/');
    const r = await app.inject('/assets/lib/fonts/a.ttf');
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'font/ttf');
    assert.equal(r.headers['cross-origin-resource-policy'], 'same-origin');
    assert.equal((await app.inject('/assets/lib/fonts/b.exe')).statusCode, 404);
    assert.equal((await app.inject('/assets/lib/fonts/..%2Ffonts%2Fa.ttf')).statusCode, 404);
    assert.equal((await app.inject('/assets/lib/fonts/')).statusCode, 404);
    await app.close();
  });

  test('an unversioned file (a helper loaded by a fixed URL): short cache, revalidated, loadable by any site', async () => {
    const app = Fastify();
    const assets = registerAssets(app, [{ 'helper.js': { file: write('helper.js', 'var x;') } }]);
    app.get('/helper.js', async (req, reply) => assets.sendUnversioned(name('helper.js'), req, reply, 3600));
    const r = await app.inject('/helper.js');
    assert.equal(r.body, 'var x;');
    assert.equal(r.headers['cache-control'], 'public, max-age=3600, must-revalidate');
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.equal(r.headers['cross-origin-resource-policy'], 'cross-origin');
    const again = await app.inject({ url: '/helper.js', headers: { 'if-none-match': String(r.headers.etag) } });
    assert.equal(again.statusCode, 304);
    await app.close();
  });
});
