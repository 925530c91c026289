// Fuzzed requests at every route the app registers, read from the app itself so that a route added later is fuzzed
// without touching this file: API routes, signer pages and actions, assets, health. Whatever the path parameters,
// query, headers, content type and body, the answer is a success, an HTML page, or a catalogue error (JSON, with a
// code at its own status); never a 5xx, and the server keeps serving. Bodies of the shapes that cost parsers and
// validators the most (deep nesting, long arrays, many keys) are refused by every route that takes a body.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { catalogue } from '../lib/errors.js';
import { DEFAULT_BODY_LIMIT, MAX_JSON_DEPTH } from '../limits.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import type { Res } from '../testing/harness.js';

const STATUS_OF_CODE = new Map<string, Set<number>>();
for (const e of Object.values(catalogue))
  STATUS_OF_CODE.set(e.code, (STATUS_OF_CODE.get(e.code) ?? new Set()).add(e.status));

const short = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** A success, a page, or a catalogue error; never a 5xx. */
function assertAnswer(r: Res, label: string): void {
  assert.ok(r.status < 500, `${label}: ${r.status} ${short(r.text)}`);
  if (r.status < 400) return;
  const type = r.headers['content-type'] ?? '';
  if (/^text\/html\b/.test(type)) {
    assert.match(r.text, /^<!doctype html>/i, `${label}: an error page is a whole page`);
    return;
  }
  assert.match(type, /^application\/json\b/, `${label}: ${r.status} with content-type "${type}"`);
  const { code, error } = r.json ?? {};
  assert.equal(typeof error, 'string', `${label}: ${short(r.text)}`);
  assert.ok(STATUS_OF_CODE.get(code)?.has(r.status), `${label}: code ${code} at ${r.status}: ${short(r.text)}`);
}

/** Header-safe text (what a client can put on the wire). */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/vnd.api+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/json; charset=utf-16',
  ';;;',
];

const jsonBody = fc.oneof(
  fc.anything({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? ''),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ signers: v, fields: v, events: v, signature: v })),
  fc.string(),
  fc.integer({ min: MAX_JSON_DEPTH - 2, max: MAX_JSON_DEPTH + 40 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`),
  fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a).toString('latin1')),
);

const request = fc.record({
  param: fc.oneof(fc.constant('real'), fc.string({ maxLength: 120 }), fc.constant('%zz'), fc.constant('..')),
  query: fc.dictionary(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 }), { maxKeys: 4 }),
  contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
  body: fc.option(jsonBody, { nil: undefined }),
  auth: fc.constantFrom('valid', 'none', 'junk'),
  accept: fc.option(fc.constantFrom('text/html', 'application/json', '*/*', 'image/png'), { nil: undefined }),
  language: fc.option(headerText, { nil: undefined }),
  idempotencyKey: fc.option(headerText, { nil: undefined }),
});

describe('every route, fuzzed', () => {
  let e: E2E;
  /** A real value for each path parameter, so fuzzing also reaches past the lookups. */
  const real: Record<string, string> = {};

  before(async () => {
    e = await startE2E();
    const pdf = await makePdf({ text: [['{{signature:signer}}']] });
    const created = await e.api('POST', '/v1/signing-requests', {
      signers: [{ role: 'signer', email: 'fuzz@example.com', name: 'Fuzz' }],
      file: { name: 'fuzz.pdf', content_base64: b64(pdf) },
      placement: 'anchors',
    });
    assert.equal(created.status, 201, created.text);
    await e.work();
    const hook = (await e.api('GET', '/v1/hooks')).json[0];
    real.token = await e.linkFor('fuzz@example.com');
    real.name = 'signer.js';
    real.id = created.json.document_id;
    real.hook = hook.id;
    real.request = created.json.signing_requests[0].id;
  });
  after(() => e?.close());

  const valueFor = (url: string, param: string, fuzzed: string): string => {
    if (fuzzed !== 'real') return encodeURIComponent(fuzzed) || 'x';
    if (param === 'id')
      return url.includes('/hooks/') ? real.hook! : url.includes('/signing-requests/') ? real.request! : real.id!;
    return real[param] ?? 'x';
  };

  test('every registered route: never a 5xx, always a page or a catalogue error', async () => {
    const routes = e.h.app.routeList.filter((r) => r.method !== 'HEAD');
    // The walk covers what a person reaches too, not only the API.
    for (const url of ['/sign/:token', '/sign/:token/sign', '/assets/:name', '/healthz', '/v1/signing-requests'])
      assert.ok(
        routes.some((r) => r.url === url),
        `${url} is registered`,
      );
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(request, async (q) => {
          const path = route.url.replace(/:(\w+)/g, (_, p: string) => valueFor(route.url, p, q.param));
          const query = new URLSearchParams(q.query).toString();
          const headers: Record<string, string> = {};
          if (q.contentType !== undefined) headers['content-type'] = q.contentType;
          if (q.accept !== undefined) headers.accept = q.accept;
          if (q.language !== undefined) headers['accept-language'] = q.language;
          if (q.idempotencyKey !== undefined) headers['idempotency-key'] = q.idempotencyKey;
          if (q.auth === 'junk') headers.authorization = 'Bearer svk_live_junk';
          const label = `${route.method} ${path}${query ? `?${query}` : ''}`;
          const r = await e.h.request(route.method, query ? `${path}?${query}` : path, {
            token: q.auth === 'valid' ? e.token : undefined,
            headers,
            rawBody: route.method === 'GET' || route.method === 'DELETE' ? undefined : q.body,
          });
          assertAnswer(r, label);
        }),
        { numRuns: 25 },
      );
    }
    assert.equal((await e.h.request('GET', '/healthz')).status, 200);
  });

  test('costly body shapes at every POST route: refused where a body is taken, never a 5xx anywhere', async () => {
    const deep = `${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`;
    const longArray = `{"signers":[${'0,'.repeat(200_000)}0],"events":[]}`;
    const manyKeys = `{"fields":{${Array.from({ length: 40_000 }, (_, i) => `"k${i}":"v"`).join(',')}}}`;
    const huge = `{"pad":"${'x'.repeat(DEFAULT_BODY_LIMIT + 1)}"}`;
    const routes = e.h.app.routeList.filter((r) => r.method === 'POST');
    for (const route of routes) {
      const path = route.url.replace(/:(\w+)/g, (_, p: string) => valueFor(route.url, p, 'real'));
      for (const [label, body] of [
        ['nested past the depth limit', deep],
        ['a 200 000-element array', longArray],
        ['40 000 keys', manyKeys],
      ] as const) {
        const r = await e.h.request('POST', path, {
          token: e.token,
          rawBody: body,
          headers: { 'content-type': 'application/json' },
        });
        assertAnswer(r, `${route.url}: ${label}`);
        // A route that takes no body ignores one (after parsing it, which is linear).
        if (route.body) assert.ok(r.status >= 400, `${route.url}: ${label} was accepted: ${short(r.text)}`);
      }
      const r = await e.h.request('POST', path, {
        token: e.token,
        rawBody: huge,
        headers: { 'content-type': 'application/json' },
      });
      assertAnswer(r, `${route.url}: over the default body limit`);
    }
  });
});
