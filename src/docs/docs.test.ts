// GET /docs over HTTP: the page, its CSP and its assets (all local), and the OpenAPI document it renders: every
// operation has request and response examples that fit their schemas, and the error catalogue lists every code.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Schema from 'typebox/schema';
import { catalogue } from '../lib/errors.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { strictSchema } from '../testing/schemas.js';
import { EVENT_NAMES } from '../webhooks/events.js';
import { deliveryHeaders } from '../webhooks/signature.js';
import { eventComponentName } from './webhooks.js';

let h: Harness;
let doc: any;
before(async () => {
  h = await startHarness({ env: { PUBLIC_RATE_LIMIT: '5' } });
  doc = (await h.request('GET', '/v1/openapi.json')).json;
});
after(() => h.close());

const TYPES: Record<string, RegExp> = { '.js': /^text\/javascript/, '.css': /^text\/css/ };

test('GET /docs: HTML with its own strict CSP, never framed, and every asset it names served by Signet', async () => {
  const r = await h.request('GET', '/docs');
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type']!, /^text\/html/);
  const csp = Object.fromEntries(
    r.headers['content-security-policy']!.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name, values.join(' ')];
    }),
  );
  assert.equal(csp['script-src'], "'self'");
  assert.equal(csp['default-src'], "'self'");
  assert.equal(csp['frame-ancestors'], "'none'");
  assert.equal(csp['object-src'], "'none'");
  assert.ok(!/unsafe-eval/.test(r.headers['content-security-policy']!), 'no eval');
  assert.equal(r.headers['x-frame-options'], 'DENY');

  // Nothing on another host: every URL in the page is a path of ours.
  const urls = [...r.text.matchAll(/(?:src|href|data-spec-url)="([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(urls.length >= 4, urls.join(' '));
  const foreign = urls.filter((u) => !u.startsWith('/') && u !== 'data:,');
  assert.deepEqual(foreign, []);
  const assets = urls.filter((u) => u.startsWith('/assets/'));
  assert.equal(assets.length, 3, assets.join(' '));
  for (const u of assets) {
    const a = await h.request('GET', u);
    assert.equal(a.status, 200, u);
    const ext = /\.(js|css)\?/.exec(u)?.[1];
    assert.ok(ext, u);
    assert.match(a.headers['content-type']!, TYPES[`.${ext}`]!, u);
    assert.match(a.headers['cache-control']!, /max-age=31536000, immutable/, u);
    // The one image Redoc's bundle would fetch from Redocly's CDN is gone from what we serve.
    assert.ok(!a.text.includes('cdn.redoc.ly'), `${u} reaches cdn.redoc.ly`);
  }
  assert.ok(urls.includes('/v1/openapi.json'), 'the page names the OpenAPI document');
});

test('/docs is a key-less page under the per-address limit, and HEAD works', async () => {
  assert.equal((await h.request('HEAD', '/docs')).status, 200);
  const limit = h.config.limits.publicRateLimit;
  const from = '127.0.0.9';
  const statuses: number[] = [];
  for (let i = 0; i <= limit; i++) statuses.push((await h.request('GET', '/docs', { localAddress: from })).status);
  assert.equal(statuses.filter((s) => s === 200).length, limit);
  assert.equal(statuses.at(-1), 429);
});

// ── The document ─────────────────────────────────────────────────────────────────────────────────────────────────

/** The schema with its $refs inlined and, where it says nothing, no properties beyond the declared ones. */
const strict = (s: unknown) => strictSchema(s, doc.components.schemas);

/** An example's ids, event names and secrets look like the service's own. */
function shapeProblems(v: unknown, at: string): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => shapeProblems(x, `${at}[${i}]`));
  if (!v || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) => {
    const here = `${at}.${k}`;
    const bad: string[] = [];
    if (typeof x === 'string' && (k === 'id' || k.endsWith('_id'))) {
      if (!/^(ws|key|hook|doc|sr|tpl|tin|del|ses|usr|bulk)_[0-9a-f]{24}$|^evt_[0-9a-f]{32}$/.test(x))
        bad.push(`${here}: id ${x}`);
    }
    if (k === 'event' && typeof x === 'string' && !(EVENT_NAMES as readonly string[]).includes(x))
      bad.push(`${here}: event ${x}`);
    if (k === 'events' && Array.isArray(x))
      for (const e of x) if (!(EVENT_NAMES as readonly string[]).includes(e)) bad.push(`${here}: event ${e}`);
    if (k === 'secret' && (typeof x !== 'string' || !/^whsec_[A-Za-z0-9_-]{43}$/.test(x)))
      bad.push(`${here}: secret ${x}`);
    return [...bad, ...shapeProblems(x, here)];
  });
}

/** The examples of a media type object: its own, or those of its (3.1, JSON Schema) schema. */
function examplesOf(media: any): unknown[] {
  if (media.example !== undefined) return [media.example];
  if (media.examples) return Object.values(media.examples).map((e: any) => e.value);
  return Array.isArray(media.schema?.examples) ? media.schema.examples : [];
}

test('the OpenAPI document covers the /v1 API only, with request and response examples for every operation', () => {
  const problems: string[] = [];
  let operations = 0;
  let examples = 0;
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    if (!path.startsWith('/v1/')) problems.push(`${path} is not part of the API`);
    for (const [method, op] of Object.entries<any>(methods)) {
      operations++;
      const name = `${method.toUpperCase()} ${path}`;
      const check = (where: string, media: any) => {
        const found = examplesOf(media);
        if (found.length === 0) return problems.push(`${name} ${where}: no example`);
        for (const ex of found) {
          examples++;
          if (!Schema.Check(strict(media.schema), ex))
            problems.push(
              `${name} ${where}: example does not fit: ${JSON.stringify(Schema.Errors(strict(media.schema), ex))}`,
            );
          problems.push(...shapeProblems(ex, `${name} ${where}`));
        }
      };
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) check(`request ${type}`, media);
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => /^2/.test(s)).sort()[0];
      // An operation that never succeeds (a retired endpoint) shows the answer it always gives.
      for (const status of success ? [success] : statuses) {
        const content = op.responses[status].content;
        if (!content) {
          if (status !== '204') problems.push(`${name} ${status}: no content`);
          continue;
        }
        for (const [type, media] of Object.entries<any>(content)) check(`${status} ${type}`, media);
      }
    }
  }
  assert.deepEqual(problems, []);
  // Every /v1 route the app registered is an operation here (openapi.test.ts checks which).
  const routes = h.app.routeList.filter(
    (r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && r.url !== '/v1/openapi.json' && r.url !== '/v1/*',
  );
  assert.equal(operations, routes.length);
  assert.ok(examples > operations, `${examples} examples for ${operations} operations`);
});

test('the document has the error body once and the error catalogue: every code with its status and meaning', () => {
  // The error body, then the webhook events' bodies and the pieces they share (below).
  assert.deepEqual(Object.keys(doc.components.schemas), [
    'Error',
    ...EVENT_NAMES.map(eventComponentName),
    'EventSigner',
    'EventSignerRef',
    'TemplateRecipient',
  ]);
  const description: string = doc.info.description;
  assert.match(description, /<SchemaDefinition schemaRef="#\/components\/schemas\/Error"/);
  const rows = [...description.matchAll(/^\| `([^`]+)` \| (\d{3}) [^|]*\| (.+) \|$/gm)].map((m) => ({
    code: m[1]!,
    status: Number(m[2]),
    meaning: m[3]!,
  }));
  const expected = Object.values(catalogue).map((e) => ({ status: e.status, code: e.code, meaning: e.message }));
  const key = (e: { status: number; code: string }) => `${e.status} ${e.code}`;
  assert.deepEqual(rows.map(key).sort(), expected.map(key).sort());
  for (const e of expected) assert.equal(rows.find((r) => key(r) === key(e))?.meaning, e.meaning, key(e));
  // The retired endpoint's one answer is the catalogue's own body.
  const retired = doc.paths['/v1/documents'].post.responses['410'].content['application/json'];
  assert.equal(retired.example.code, catalogue.placement_retired_endpoint.code);
  assert.equal(retired.example.error, catalogue.placement_retired_endpoint.message);
});

test('webhooks: one POST per event, its body a named component with an example that fits, and the headers', () => {
  assert.deepEqual(Object.keys(doc.webhooks), EVENT_NAMES);
  // The headers every delivery carries (Content-Type is the body's media type).
  const sent = Object.keys(deliveryHeaders('whsec_x', 0, 'evt_x', 'x', '')).filter((k) => k !== 'content-type');
  const problems: string[] = [];
  for (const name of EVENT_NAMES) {
    const op = doc.webhooks[name].post;
    assert.ok(op.summary && op.description, `${name}: summary and description`);
    assert.deepEqual(op.security, [], `${name}: no API key; the signature authenticates`);
    assert.match(op.responses['2XX'].description, /2xx/);
    const headers = op.parameters.map((p: any) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p));
    assert.deepEqual(
      headers.map((x: any) => x.name.toLowerCase()),
      sent,
      name,
    );
    const named = headers.filter((x: any) => /-event$/i.test(x.name));
    assert.deepEqual(
      named.map((x: any) => x.example),
      [name, name],
    );
    for (const x of headers) {
      assert.equal(x.in, 'header');
      if (!Schema.Check(x.schema, x.example)) problems.push(`${name} ${x.name}: example does not fit`);
    }
    const media = op.requestBody.content['application/json'];
    assert.equal(media.schema.$ref, `#/components/schemas/${eventComponentName(name)}`);
    const examples = examplesOf(media);
    assert.equal(examples.length, 1, name);
    for (const ex of examples as any[]) {
      assert.equal(ex.event, name);
      if (!Schema.Check(strict(media.schema), ex))
        problems.push(`${name}: example does not fit: ${JSON.stringify(Schema.Errors(strict(media.schema), ex))}`);
      // Strict: one field more does not fit (the retired placement_expired alone is open).
      if (name !== 'placement_expired' && Schema.Check(strict(media.schema), { ...ex, extra: 1 }))
        problems.push(`${name}: a field more still fits`);
      problems.push(...shapeProblems(ex, name));
    }
  }
  assert.deepEqual(problems, []);
});
