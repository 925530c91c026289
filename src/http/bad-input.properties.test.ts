// Bad input at every /v1 route, property-based: fast-check generates bodies, fields, bytes, ids and Idempotency-Keys.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Res } from '../testing/harness.js';
import { EVENT_NAMES } from '../webhooks/events.js';
import { JSON_CT } from './testing/bad-values.js';
import {
  assertCatalogueError,
  counts,
  h,
  otherHookId,
  send,
  short,
  testAfterTheBarrage,
  useBadInputServer,
  type Req,
} from './testing/bad-input.js';

describe('bad input at every route', () => {
  useBadInputServer();

  // -------------------------------------------------------------------------------------------------------------
  // Property-based: fast-check drives the same invariants with generated input.

  const oddChar = fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    fc.constantFrom(
      '\u0000',
      '\u202e',
      '\u200f',
      '\ufeff',
      '\u0301',
      '🙂',
      '"',
      '\\',
      '/',
      '%',
      '?',
      '#',
      '@',
      ':',
      '[',
      ']',
    ),
  );
  const oddString = fc.string({ unit: oddChar, maxLength: 40 });
  const anyString = fc.oneof(
    oddString,
    fc.string({ unit: 'grapheme', maxLength: 60 }),
    fc.webUrl(),
    fc.constantFrom(...EVENT_NAMES),
  );

  /** The invariant for any request: a 2xx, or a catalogue 4xx with no rows changed. */
  async function invariant(req: Req, label: string): Promise<Res> {
    const before = await counts(h);
    const r = await send(req);
    if (r.status >= 200 && r.status < 300) return r;
    assertCatalogueError(r, `${label} ${short(JSON.stringify(req.body ?? ''), 200)} -> ${r.status} ${short(r.text)}`);
    assert.deepEqual(await counts(h), before, `${label}: rows changed on a ${r.status}`);
    return r;
  }

  test('property: any JSON value as the POST /v1/hooks body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (v) => {
        const r = await invariant(
          { method: 'POST', path: '/v1/hooks', headers: JSON_CT, body: JSON.stringify(v) },
          'json body',
        );
        if (r.status < 300) assert.equal(r.status, 201);
      }),
      { numRuns: 150, includeErrorInReport: true },
    );
  });

  test('property: generated target_url and events — a 201 only for an http(s) URL without credentials and known events', async () => {
    const events = fc.oneof(
      fc.array(fc.constantFrom(...EVENT_NAMES), { maxLength: 12 }),
      fc.array(anyString, { maxLength: 12 }),
      fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 4 }),
      fc.anything({ maxDepth: 1 }),
    );
    const target = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.webUrl().map((u) => u.replace(/^https?/, 'ftp')),
      fc.tuple(fc.webUrl(), oddString).map(([u, s]) => `${u}/${s}`),
      fc.tuple(oddString, oddString).map(([a, b]) => `http://${a}:${b}@127.0.0.1/`),
      anyString,
      fc.anything({ maxDepth: 1 }),
    );
    await fc.assert(
      fc.asyncProperty(target, fc.option(events, { nil: undefined }), async (target_url, ev) => {
        const body = JSON.stringify(ev === undefined ? { target_url } : { target_url, events: ev });
        const before = await counts(h);
        const r = await invariant({ method: 'POST', path: '/v1/hooks', headers: JSON_CT, body }, 'hook fields');
        if (r.status < 300) {
          assert.equal(r.status, 201);
          const stored = new URL(r.json.target_url);
          assert.match(stored.protocol, /^https?:$/, r.json.target_url);
          assert.equal(stored.username + stored.password, '', r.json.target_url);
          assert.ok(r.json.target_url.length <= 2048, 'r.json.target_url.length <= 2048');
          assert.ok(
            Array.isArray(r.json.events) && r.json.events.length <= 10,
            'Array.isArray(r.json.events) && r.json.events.length <= 10',
          );
          for (const e of r.json.events) assert.ok((EVENT_NAMES as readonly string[]).includes(e), e);
          assert.match(r.json.secret, /^whsec_/);
          const after = await counts(h);
          assert.deepEqual(after, { ...before, hooks: before.hooks + 1, liveHooks: before.liveHooks + 1 });
        }
      }),
      { numRuns: 300, includeErrorInReport: true },
    );
  });

  test('property: arbitrary bytes with arbitrary content types at every body-taking route', async () => {
    const routesWithBodies = [
      { method: 'POST', path: '/v1/hooks' },
      { method: 'POST', path: `/v1/hooks/${otherHookId}/test` },
      { method: 'DELETE', path: `/v1/hooks/${otherHookId}` },
      { method: 'POST', path: '/v1/documents' },
      { method: 'POST', path: '/v1/nope' },
    ];
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/problem+json',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      'application/x-www-form-urlencoded',
      'text/json',
    );
    const bytes = fc.oneof(
      oddString.map((s) => Buffer.from(s, 'utf8')),
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      fc.json({ maxDepth: 2 }).map((s) => Buffer.from(s, 'utf8')),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routesWithBodies), contentType, bytes, async (route, ct, body) => {
        const r = await invariant(
          { ...route, headers: { 'content-type': ct }, body },
          `${route.method} ${route.path} ${ct}`,
        );
        // Nothing here is valid for a route this key can reach, except a JSON body that happens to be a hook.
        if (r.status < 300) assert.equal(route.path, '/v1/hooks', `${route.method} ${route.path} answered ${r.status}`);
        if (route.path === '/v1/documents') assert.equal(r.status, 410);
      }),
      { numRuns: 200, includeErrorInReport: true },
    );
  });

  test('property: arbitrary ids in paths are 4xx and write nothing', async () => {
    const idRoutes = [
      (id: string) => ({ method: 'DELETE', path: `/v1/hooks/${id}` }),
      (id: string) => ({ method: 'POST', path: `/v1/hooks/${id}/test` }),
      (id: string) => ({ method: 'GET', path: `/v1/hooks/${id}/deliveries` }),
    ];
    const id = fc.oneof(
      oddString
        .filter((s) => s.length > 0)
        .map((s) => {
          try {
            return encodeURIComponent(s);
          } catch {
            // Lone surrogates cannot be percent-encoded by encodeURIComponent; send their WTF-8 bytes encoded instead.
            return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');
          }
        }),
      fc
        .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 120 })
        .map((s) => s.replace(/[/?#]/g, '_').replace(/^\.{1,2}$/, '_')),
      fc.stringMatching(/^%[0-9A-Fa-f]{0,2}[a-z%]{0,4}$/),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...idRoutes), id, async (route, i) => {
        const req = route(i);
        const before = await counts(h);
        const r = await send({ ...req, raw: /[^\x21-\x7e]/.test(i) });
        assertCatalogueError(r, `${req.method} ${short(req.path)}`);
        assert.deepEqual(await counts(h), before);
      }),
      { numRuns: 200, includeErrorInReport: true },
    );
  });

  test('property: Idempotency-Key values are accepted exactly when they are 1-255 visible ASCII characters', async () => {
    const keyChar = fc.oneof(
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
      fc.constantFrom(' ', '\t', 'é', '✓', '🙂', '\u00a0', '\u007f'),
    );
    const idemKey = fc.oneof(
      fc.string({ unit: keyChar, minLength: 0, maxLength: 40 }),
      fc.integer({ min: 250, max: 300 }).map((n) => 'k'.repeat(n)),
    );
    // The body is always invalid (no target_url), so nothing can be written whichever check answers.
    const body = JSON.stringify({ events: [] });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(idemKey, async (k) => {
        // A per-run suffix keeps two runs from sharing a key (which would replay the first answer).
        const keyed = k.length < 240 ? `${k}-${n++}` : k;
        // HTTP strips leading and trailing whitespace from a header value.
        const effective = keyed.replace(/^[ \t]+|[ \t]+$/g, '');
        const r = await invariant(
          { method: 'POST', path: '/v1/hooks', headers: { ...JSON_CT, 'idempotency-key': keyed }, body, raw: true },
          `Idempotency-Key ${JSON.stringify(keyed)}`,
        );
        const valid = /^[\x21-\x7e]{1,255}$/.test(effective);
        assert.equal(r.status, 400, r.text);
        assert.equal(r.json.code, 'invalid_request', r.text);
        if (valid)
          assert.notEqual(
            r.json.meta?.field,
            'Idempotency-Key',
            `${JSON.stringify(keyed)} should be accepted: ${r.text}`,
          );
        // Control characters never reach the app: the HTTP parser refuses the whole request (same body, no field).
        else if (!/[\x00-\x08\x0a-\x1f\x7f]/.test(keyed)) {
          assert.equal(r.json.meta?.field, 'Idempotency-Key', `${JSON.stringify(keyed)} should be refused: ${r.text}`);
        }
      }),
      { numRuns: 200, includeErrorInReport: true },
    );
  });

  testAfterTheBarrage();
});
