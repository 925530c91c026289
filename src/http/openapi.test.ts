import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('GET /v1/openapi.json needs no key and documents every route from the validating schemas', async () => {
  const r = await h.request('GET', '/v1/openapi.json');
  assert.equal(r.status, 200);
  const doc = r.json;
  assert.equal(doc.openapi, '3.1.0');
  for (const [path, methods] of Object.entries({
    '/v1/me': ['get'],
    '/v1/hooks': ['get', 'post'],
    '/v1/hooks/{id}': ['delete'],
    '/v1/hooks/{id}/test': ['post'],
    '/v1/hooks/{id}/deliveries': ['get'],
    '/v1/documents': ['post'],
  })) {
    for (const m of methods) assert.ok(doc.paths[path]?.[m], `${m.toUpperCase()} ${path}`);
  }
  // Every /v1 route the app registered is in the document (templates and instances included).
  const v1 = h.app.routeList.filter(
    (r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && r.url !== '/v1/openapi.json' && r.url !== '/v1/*',
  );
  assert.ok(v1.length >= 25, `${v1.length} routes`);
  const missing = v1
    .filter((r) => !doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()])
    .map((r) => `${r.method} ${r.url}`);
  assert.deepEqual(missing, []);
  for (const p of ['/v1/templates/{id}/instantiate', '/v1/template-instances/{id}/confirm'])
    assert.ok(doc.paths[p]?.post, p);
  const create = doc.paths['/v1/hooks'].post;
  const body = create.requestBody.content['application/json'].schema;
  assert.deepEqual(body.required, ['target_url']);
  assert.equal(body.properties.target_url.maxLength, 2048);
  assert.equal(body.additionalProperties, false);
  assert.ok(create.responses['201'], "create.responses['201']");
  assert.ok(doc.components.securitySchemes.bearer, 'doc.components.securitySchemes.bearer');
  assert.ok(!('/v1/openapi.json' in doc.paths), "!('/v1/openapi.json' in doc.paths)");
});
