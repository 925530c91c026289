// Bad input at every /v1 route, table-driven and property-based. Every answer must be a 4xx whose body is exactly
// the catalogue's error shape ({ error, code, meta? }, + `ip` for ip_not_allowed only), never a 5xx, and nothing may
// be half-written: hook, delivery and event rows change only when the answer is a 2xx.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fc from 'fast-check';
import { sql } from 'kysely';
import { catalogue } from '../lib/errors.js';
import { startHarness, type Harness, type Res } from '../testing/harness.js';
import { setRateLimit } from '../keys/keys.repo.js';
import { EVENT_NAMES } from '../webhooks/events.js';

// ---------------------------------------------------------------------------------------------------------------
// Checks

const STATUSES_OF_CODE = new Map<string, Set<number>>();
for (const e of Object.values(catalogue)) {
  const s = STATUSES_OF_CODE.get(e.code) ?? new Set<number>();
  s.add(e.status);
  STATUSES_OF_CODE.set(e.code, s);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

const short = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** A 4xx whose body is exactly the catalogue shape, with a code from the catalogue at that code's status. */
function assertCatalogueError(r: Res, label: string): { error: string; code: string; meta?: Record<string, unknown> } {
  assert.ok(r.status >= 400 && r.status < 500, `${label}: expected a 4xx, got ${r.status} ${short(r.text)}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json\b/, `${label}: content-type`);
  let body: unknown;
  try {
    body = JSON.parse(r.text);
  } catch {
    assert.fail(`${label}: body is not JSON: ${short(r.text)}`);
  }
  assert.ok(isPlainObject(body), `${label}: body is not an object: ${short(r.text)}`);
  const { error, code, meta } = body;
  assert.equal(typeof error, 'string', `${label}: error`);
  assert.ok((error as string).length > 0, `${label}: error text is empty`);
  assert.equal(typeof code, 'string', `${label}: code`);
  const statuses = STATUSES_OF_CODE.get(code as string);
  assert.ok(statuses, `${label}: code ${String(code)} is not in the catalogue (${short(r.text)})`);
  assert.ok(statuses.has(r.status), `${label}: code ${String(code)} answered with status ${r.status}`);
  const allowed = code === 'ip_not_allowed' ? ['error', 'code', 'meta', 'ip'] : ['error', 'code', 'meta'];
  for (const k of Object.keys(body))
    assert.ok(allowed.includes(k), `${label}: unexpected field "${k}" in ${short(r.text)}`);
  if (meta !== undefined) assert.ok(isPlainObject(meta), `${label}: meta must be an object`);
  if (code === 'ip_not_allowed') assert.ok('ip' in body, `${label}: ip_not_allowed carries ip`);
  return body as { error: string; code: string; meta?: Record<string, unknown> };
}

type Counts = { hooks: number; liveHooks: number; deliveries: number; events: number; attempts: number };

async function counts(h: Harness): Promise<Counts> {
  const n = async (q: string) => Number((await sql.raw<{ n: number }>(q).execute(h.db.kysely)).rows[0]!.n);
  const [hooks, liveHooks, deliveries, events, attempts] = await Promise.all([
    n('select count(*) as n from hooks'),
    n('select count(*) as n from hooks where deleted_at is null'),
    n('select count(*) as n from deliveries'),
    n('select count(*) as n from events'),
    n('select count(*) as n from delivery_attempts'),
  ]);
  return { hooks, liveHooks, deliveries, events, attempts };
}

// ---------------------------------------------------------------------------------------------------------------
// Sending: through undici for ordinary requests, over a raw socket for bytes undici would refuse or normalise
// (non-ASCII header values, `../` in paths, unknown methods, missing content type, chunked bodies).

type Req = {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Bearer token; undefined = the test key, null = no Authorization header. */
  token?: string | null;
  raw?: boolean;
  /** Raw only: send the body with Transfer-Encoding: chunked in chunks of this size. */
  chunked?: number;
};

function parseRawResponse(buf: Buffer): Res {
  const sep = buf.indexOf('\r\n\r\n');
  assert.ok(sep > 0, `no HTTP response head in ${short(buf.toString('latin1'))}`);
  const lines = buf.subarray(0, sep).toString('latin1').split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = buf.subarray(sep + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf('\r\n', at);
      const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
      if (!size) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

function rawExchange(port: number, parts: Buffer[]): Promise<Res> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    // The server may answer and close before it has read everything (a 413, a 410); that is not a failure.
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (chunks.length === 0) reject(err);
    });
    s.on('close', () => {
      try {
        resolve(parseRawResponse(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    s.setTimeout(10_000, () => s.destroy(new Error('raw request timed out')));
    for (const p of parts) s.write(p);
  });
}

function makeSender(h: Harness, token: string) {
  return async function send(req: Req): Promise<Res> {
    const headers: Record<string, string> = { ...req.headers };
    const tok = req.token === undefined ? token : req.token;
    if (tok !== null) headers.authorization = `Bearer ${tok}`;
    if (!req.raw) return h.request(req.method, req.path, { headers, rawBody: req.body });
    const body =
      req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    const head: Buffer[] = [
      Buffer.from(`${req.method} ${req.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`, 'utf8'),
    ];
    for (const [k, v] of Object.entries(headers)) head.push(Buffer.from(`${k}: ${v}\r\n`, 'utf8'));
    const parts: Buffer[] = [];
    if (body !== undefined && req.chunked) {
      head.push(Buffer.from('Transfer-Encoding: chunked\r\n\r\n'));
      parts.push(Buffer.concat(head));
      for (let i = 0; i < body.length; i += req.chunked) {
        const c = body.subarray(i, i + req.chunked);
        parts.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'));
      }
      parts.push(Buffer.from('0\r\n\r\n'));
    } else {
      if (body !== undefined) head.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
      head.push(Buffer.from('\r\n'));
      parts.push(Buffer.concat(head));
      if (body !== undefined) parts.push(body);
    }
    return rawExchange(h.port, parts);
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Bad values

const JSON_CT = { 'content-type': 'application/json' };
const TWO_MB = `{"target_url":"http://127.0.0.1/h","pad":"${'x'.repeat(2 * 1024 * 1024)}"}`;
const HUNDRED_KB = 'x'.repeat(100 * 1024);

/** Odd Unicode: lone surrogates, NUL, bidi controls, BOM, combining marks, astral emoji, a 100 KB run. */
const ODD_STRINGS: Array<[string, string]> = [
  ['lone high surrogate', '\ud800'],
  ['lone low surrogate inside text', 'a\udc00b'],
  ['NUL', '\u0000'],
  ['NUL inside text', 'signing_request.sent\u0000'],
  ['RTL override and marks', '\u202esigning_request.sent\u200f'],
  ['BOM', '\ufeffsigning_request.sent'],
  ['emoji', '🙂🔥👩‍👩‍👧'],
  ['combining mark', 'signing_requést.sent'],
  ['overlong (100 KB)', HUNDRED_KB],
];

const MALFORMED_JSON: Array<[string, string]> = [
  ['truncated object', '{"target_url":'],
  ['single quotes', "{'target_url':'http://127.0.0.1/h'}"],
  ['trailing comma', '{"target_url":"http://127.0.0.1/h",}'],
  ['two values', '{"target_url":"http://127.0.0.1/h"}{}'],
  ['bare word', 'undefined'],
  ['NaN', 'NaN'],
  ['unterminated string', '{"target_url":"http://127.0.0.1/h'],
  ['raw control character in a string', '{"target_url":"http://127.0.0.1/\u0001"}'],
  ['bad escape', '{"target_url":"\\x41"}'],
  ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
];

const POISON: Array<[string, string]> = [
  ['__proto__', '{"__proto__":{}}'],
  ['__proto__ with payload', '{"target_url":"http://127.0.0.1/h","__proto__":{"polluted":true}}'],
  ['nested __proto__', '{"target_url":"http://127.0.0.1/h","events":[],"x":{"__proto__":{"polluted":true}}}'],
  ['constructor.prototype', '{"constructor":{"prototype":{}}}'],
  [
    'constructor.prototype with payload',
    '{"target_url":"http://127.0.0.1/h","constructor":{"prototype":{"polluted":true}}}',
  ],
];

const BAD_TARGET_URLS: Array<[string, unknown]> = [
  ['ftp scheme', 'ftp://example.com/hook'],
  ['javascript scheme', 'javascript:alert(1)'],
  ['file scheme', 'file:///etc/passwd'],
  ['data scheme', 'data:text/plain,hi'],
  ['ws scheme', 'ws://example.com/hook'],
  ['mailto', 'mailto:ops@example.com'],
  ['credentials', 'http://user:pass@example.com/hook'],
  ['username only', 'https://user@example.com/hook'],
  ['no host', 'http://'],
  ['relative', '/hook'],
  ['scheme-relative', '//example.com/hook'],
  ['bare host', 'example.com/hook'],
  ['space in host', 'http://exa mple.com/'],
  ['NUL in host', 'http://exa\u0000mple.com/'],
  ['unclosed IPv6 literal', 'http://[::1'],
  ['bad IPv6 literal', 'http://[::g]/'],
  ['3000 characters', `http://example.com/${'a'.repeat(3000)}`],
  ['3000-character host', `http://${'a'.repeat(3000)}.com/`],
  ['100 KB', `http://example.com/${HUNDRED_KB}`],
  ['empty', ''],
  ['number', 42],
  ['null', null],
  ['boolean', true],
  ['array', ['http://127.0.0.1/h']],
  ['object', { href: 'http://127.0.0.1/h' }],
];

const BAD_EVENTS: Array<[string, unknown]> = [
  ['unknown name', ['document.exploded']],
  ['wrong case', ['SIGNING_REQUEST.SENT']],
  ['trailing space', ['signing_request.sent ']],
  ['11 names', [...EVENT_NAMES, 'document.exploded']],
  ['11 names, all unknown', Array.from({ length: 11 }, (_, i) => `unknown.${i}`)],
  ['not an array (string)', 'signing_request.sent'],
  ['not an array (object)', { 0: 'signing_request.sent' }],
  ['null', null],
  ['nested arrays', [['signing_request.sent']]],
  ['numbers', [1, 2]],
  ['null element', [null]],
  ['object element', [{ name: 'signing_request.sent' }]],
  ['boolean element', [true]],
  ['one known, one number', ['signing_request.sent', 7]],
  ['101-character name', ['s'.repeat(101)]],
  ...ODD_STRINGS.map(([label, s]): [string, unknown] => [`odd Unicode: ${label}`, [s]]),
];

const WRONG_TYPE_BODIES: Array<[string, unknown]> = [
  ['array', []],
  ['array of object', [{ target_url: 'http://127.0.0.1/h' }]],
  ['string', 'http://127.0.0.1/h'],
  ['number', 1],
  ['true', true],
  ['null', null],
  ['empty object', {}],
  ['events only', { events: [] }],
  ['unknown field', { target_url: 'http://127.0.0.1/h', events: [], colour: 'red' }],
  ['own secret', { target_url: 'http://127.0.0.1/h', secret: 'whsec_mine' }],
  ['id supplied', { target_url: 'http://127.0.0.1/h', id: 'hook_mine' }],
];

const BAD_IDEMPOTENCY_KEYS: Array<[string, string, boolean]> = [
  // [label, value, raw socket needed]
  ['256 characters', 'k'.repeat(256), false],
  ['inner space', 'two words', false],
  ['tab', 'a\tb', true],
  ['non-ASCII (UTF-8 bytes)', 'clé-✓', true],
  ['emoji', '🙂', true],
  ['empty', '', true],
];

// Path segments for `{id}`, as they go on the wire.
const BAD_IDS: Array<[string, string, { raw?: boolean; code?: string }]> = [
  ['%00', '%00', { code: 'not_found' }],
  ['NUL after a hook id', 'hook_0%00', { code: 'not_found' }],
  ['bad percent-encoding', '%zz', { code: 'invalid_request' }],
  ['truncated percent-encoding', 'abc%', { code: 'invalid_request' }],
  ['encoded lone surrogate', '%ED%A0%80', { code: 'invalid_request' }],
  ['80 characters', 'h'.repeat(80), { code: 'invalid_request' }],
  ['500 characters', 'h'.repeat(500), { code: 'invalid_request' }],
  ['../ (raw)', '../me', { raw: true, code: 'not_found' }],
  ['.. (raw)', '..', { raw: true, code: 'not_found' }],
  ['encoded ../../', '..%2F..%2Fme', { code: 'not_found' }],
  ['encoded backslashes', '..%5C..%5Cme', { code: 'not_found' }],
  ['emoji', '%F0%9F%99%82', { code: 'not_found' }],
  ['RTL override', '%E2%80%AEkooh', { code: 'not_found' }],
  ['space', '%20', { code: 'not_found' }],
  ['SQL', encodeURIComponent("hook_' OR '1'='1"), { code: 'not_found' }],
  ['unknown id', 'hook_000000000000000000000000', { code: 'not_found' }],
];

// ---------------------------------------------------------------------------------------------------------------

describe('bad input at every route', () => {
  let h: Harness;
  let send: (req: Req) => Promise<Res>;
  let token: string;
  let hookId: string;
  let otherHookId: string;

  /** Sends one bad request; it must be a catalogue 4xx (optionally a given status/code) and must write nothing. */
  async function refused(label: string, req: Req, expect: { status?: number; code?: string } = {}) {
    const before = await counts(h);
    const r = await send(req);
    const body = assertCatalogueError(r, label);
    if (expect.status !== undefined) assert.equal(r.status, expect.status, `${label}: ${short(r.text)}`);
    if (expect.code !== undefined) assert.equal(body.code, expect.code, `${label}: ${short(r.text)}`);
    assert.deepEqual(await counts(h), before, `${label}: rows changed on a ${r.status}`);
    return { r, body };
  }

  before(async () => {
    h = await startHarness();
    const t = await h.tenant('business');
    token = t.token;
    // One key for the whole barrage: its limit is raised so the 60/min window never answers instead.
    await setRateLimit(h.db.kysely, t.keyId, 1_000_000);
    send = makeSender(h, token);
    const created = await send({
      method: 'POST',
      path: '/v1/hooks',
      headers: JSON_CT,
      body: JSON.stringify({ target_url: 'http://127.0.0.1:9/own', events: [] }),
    });
    assert.equal(created.status, 201, created.text);
    hookId = created.json.id;
    const other = await h.tenant('business');
    const otherHook = await h.request('POST', '/v1/hooks', {
      token: other.token,
      body: { target_url: 'http://127.0.0.1:9/other' },
    });
    assert.equal(otherHook.status, 201, otherHook.text);
    otherHookId = otherHook.json.id;
  });
  after(() => h?.close());

  // Every /v1 route the app registered (those that need a key), and unknown paths, which pass the gate too.
  const routes = () => [
    ...h.app.routeList
      .filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && r.url !== '/v1/openapi.json')
      .map((r) => ({ method: r.method, path: r.url.replace(':id', hookId) })),
    { method: 'GET', path: '/v1/no-such-thing' },
    { method: 'POST', path: '/v1/no-such-thing' },
  ];

  test('every route: missing, malformed and non-ASCII credentials are 401 invalid_key', async () => {
    for (const { method, path } of routes()) {
      const label = `${method} ${path}`;
      await refused(`${label} without a key`, { method, path, token: null }, { status: 401, code: 'invalid_key' });
      await refused(
        `${label} with a wrong-prefix key`,
        { method, path, token: `sk_live_${'a'.repeat(32)}` },
        { status: 401, code: 'invalid_key' },
      );
      await refused(
        `${label} with an unknown key`,
        { method, path, token: `svk_live_${'0'.repeat(32)}` },
        { status: 401, code: 'invalid_key' },
      );
      await refused(
        `${label} with a non-ASCII key`,
        { method, path, token: `svk_live_${'é'.repeat(32)}`, raw: true },
        { status: 401, code: 'invalid_key' },
      );
      await refused(
        `${label} with an emoji key`,
        { method, path, token: `svk_live_${'🙂'.repeat(16)}`, raw: true },
        { status: 401, code: 'invalid_key' },
      );
      await refused(
        `${label} with a 4 KB key`,
        { method, path, token: `svk_live_${'a'.repeat(4096)}` },
        { status: 401, code: 'invalid_key' },
      );
    }
  });

  test('every route: request heads the HTTP parser refuses still get a catalogue body', async () => {
    for (const { method, path } of routes()) {
      const label = `${method} ${path}`;
      // 100 KB of header: over Node's header limit, refused before routing.
      await refused(`${label} with a 100 KB Authorization header`, {
        method,
        path,
        token: `svk_live_${HUNDRED_KB}`,
        raw: true,
      });
      await refused(`${label} with a NUL in a header`, { method, path, headers: { 'x-odd': 'a\u0000b' }, raw: true });
    }
    await refused('unknown method FOO', { method: 'FOO', path: '/v1/me', raw: true });
    await refused('lower-case method', { method: 'get', path: '/v1/me', raw: true });
    await refused('non-ASCII bytes in the path', { method: 'GET', path: '/v1/hooks/hé✓', raw: true });
    await refused('space-free garbage request line', { method: 'GET', path: '/v1/me HTTP/1.1 extra', raw: true });
  });

  test('unknown routes and methods under /v1 are 404 not_found (after authentication)', async () => {
    const cases: Array<[string, string]> = [
      ['GET', '/v1'],
      ['GET', '/v1/'],
      ['GET', '/v1/nope'],
      ['POST', '/v1/nope'],
      ['GET', '/v1/HOOKS'],
      ['GET', '/v1//hooks'],
      ['GET', '/v1/hooks/x/y/z'],
      ['PUT', '/v1/hooks'],
      ['PATCH', '/v1/hooks'],
      ['DELETE', '/v1/hooks'],
      ['OPTIONS', '/v1/hooks'],
      ['TRACE', '/v1/me'],
      ['POST', '/v1/me'],
      ['DELETE', '/v1/me'],
      ['PUT', '/v1/documents'],
      ['PATCH', `/v1/hooks/${hookId}`],
      ['GET', `/v1/hooks/${hookId}/test`],
      ['POST', `/v1/hooks/${hookId}/deliveries`],
    ];
    for (const [method, path] of cases) {
      await refused(
        `${method} ${path}`,
        { method, path, headers: JSON_CT, body: method === 'GET' || method === 'TRACE' ? undefined : '{}' },
        { status: 404, code: 'not_found' },
      );
    }
  });

  test('POST /v1/documents answers 410 placement_retired whatever the body', async () => {
    const path = '/v1/documents';
    const bodies: Array<[string, Req]> = [
      ['no body', { method: 'POST', path }],
      ['empty JSON object', { method: 'POST', path, headers: JSON_CT, body: '{}' }],
      [
        'a plausible document',
        {
          method: 'POST',
          path,
          headers: JSON_CT,
          body: JSON.stringify({
            file_url: 'https://example.com/a.pdf',
            placement: 'manual',
            signers: [{ role: 'a', email: 'a@example.com', name: 'A' }],
          }),
        },
      ],
      ['2 MB JSON', { method: 'POST', path, headers: JSON_CT, body: TWO_MB }],
      ['2 MB chunked', { method: 'POST', path, headers: JSON_CT, body: TWO_MB, raw: true, chunked: 64 * 1024 }],
      ['100 KB string', { method: 'POST', path, headers: JSON_CT, body: JSON.stringify({ name: HUNDRED_KB }) }],
      ['text/plain', { method: 'POST', path, headers: { 'content-type': 'text/plain' }, body: 'hello' }],
      [
        'multipart',
        {
          method: 'POST',
          path,
          headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
          body: '--xyz\r\nContent-Disposition: form-data; name="file"\r\n\r\n%PDF-1.7\r\n--xyz--\r\n',
        },
      ],
      ['no content type', { method: 'POST', path, body: '{}', raw: true }],
      [
        'bad Idempotency-Key',
        { method: 'POST', path, headers: { ...JSON_CT, 'idempotency-key': 'k'.repeat(256) }, body: '{}' },
      ],
      ...MALFORMED_JSON.map(([l, b]): [string, Req] => [
        `malformed: ${l}`,
        { method: 'POST', path, headers: JSON_CT, body: b },
      ]),
      ...POISON.map(([l, b]): [string, Req] => [`poison: ${l}`, { method: 'POST', path, headers: JSON_CT, body: b }]),
      ...ODD_STRINGS.map(([l, s]): [string, Req] => [
        `odd Unicode: ${l}`,
        { method: 'POST', path, headers: JSON_CT, body: JSON.stringify({ name: s }) },
      ]),
    ];
    for (const [label, req] of bodies) {
      await refused(`POST /v1/documents, ${label}`, req, { status: 410, code: 'placement_retired' });
    }
  });

  test('POST /v1/hooks: malformed JSON, prototype poisoning and wrong top-level types are 400 invalid_request', async () => {
    const path = '/v1/hooks';
    for (const [label, body] of MALFORMED_JSON) {
      await refused(
        `malformed: ${label}`,
        { method: 'POST', path, headers: JSON_CT, body },
        { status: 400, code: 'invalid_request' },
      );
    }
    for (const [label, body] of POISON) {
      await refused(
        `poison: ${label}`,
        { method: 'POST', path, headers: JSON_CT, body },
        { status: 400, code: 'invalid_request' },
      );
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
    for (const [label, body] of WRONG_TYPE_BODIES) {
      await refused(
        `wrong type: ${label}`,
        { method: 'POST', path, headers: JSON_CT, body: JSON.stringify(body) },
        { status: 400, code: 'invalid_request' },
      );
    }
    await refused(
      'empty body',
      { method: 'POST', path, headers: JSON_CT, body: '' },
      { status: 400, code: 'invalid_request' },
    );
    await refused(
      'whitespace body',
      { method: 'POST', path, headers: JSON_CT, body: ' \n\t ' },
      { status: 400, code: 'invalid_request' },
    );
    await refused('no body at all', { method: 'POST', path }, { status: 400, code: 'invalid_request' });
  });

  test('POST /v1/hooks: bad target_url values are 400 invalid_request naming the field', async () => {
    for (const [label, url] of BAD_TARGET_URLS) {
      const { body } = await refused(
        `target_url ${label}`,
        { method: 'POST', path: '/v1/hooks', headers: JSON_CT, body: JSON.stringify({ target_url: url, events: [] }) },
        { status: 400, code: 'invalid_request' },
      );
      assert.equal(body.meta?.field, 'target_url', `target_url ${label}: ${JSON.stringify(body)}`);
    }
  });

  test('POST /v1/hooks: bad events are 400 invalid_request naming the field', async () => {
    for (const [label, events] of BAD_EVENTS) {
      const { body } = await refused(
        `events ${label}`,
        {
          method: 'POST',
          path: '/v1/hooks',
          headers: JSON_CT,
          body: JSON.stringify({ target_url: 'http://127.0.0.1:9/h', events }),
        },
        { status: 400, code: 'invalid_request' },
      );
      assert.match(String(body.meta?.field), /^events(\.\d+)?$/, `events ${label}: ${JSON.stringify(body)}`);
    }
  });

  test('POST /v1/hooks: huge bodies — 100 KB values are 400, 2 MB bodies are 413 payload_too_large', async () => {
    const path = '/v1/hooks';
    await refused(
      '100 KB target_url',
      {
        method: 'POST',
        path,
        headers: JSON_CT,
        body: JSON.stringify({ target_url: `http://127.0.0.1/${HUNDRED_KB}` }),
      },
      { status: 400, code: 'invalid_request' },
    );
    await refused(
      '100 KB event name',
      {
        method: 'POST',
        path,
        headers: JSON_CT,
        body: JSON.stringify({ target_url: 'http://127.0.0.1/h', events: [HUNDRED_KB] }),
      },
      { status: 400, code: 'invalid_request' },
    );
    await refused(
      '100 KB unknown field',
      {
        method: 'POST',
        path,
        headers: JSON_CT,
        body: JSON.stringify({ target_url: 'http://127.0.0.1/h', pad: HUNDRED_KB }),
      },
      { status: 400, code: 'invalid_request' },
    );
    await refused(
      '2 MB JSON',
      { method: 'POST', path, headers: JSON_CT, body: TWO_MB },
      { status: 413, code: 'payload_too_large' },
    );
    await refused(
      '2 MB chunked JSON',
      { method: 'POST', path, headers: JSON_CT, body: TWO_MB, raw: true, chunked: 64 * 1024 },
      { status: 413, code: 'payload_too_large' },
    );
    // A 2 MB body of the wrong type may be refused for either reason, but never parsed.
    const { body: wrongType } = await refused('2 MB of text/plain', {
      method: 'POST',
      path,
      headers: { 'content-type': 'text/plain' },
      body: TWO_MB,
    });
    assert.ok(['invalid_request', 'payload_too_large'].includes(wrongType.code), wrongType.code);
    // A Content-Length over the limit is refused from the header alone.
    const before = await counts(h);
    const r = await rawExchange(h.port, [
      Buffer.from(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\nConnection: close\r\n\r\n{}`,
      ),
    ]);
    assert.equal(assertCatalogueError(r, 'Content-Length 2 MB').code, 'payload_too_large');
    assert.equal(r.status, 413);
    assert.deepEqual(await counts(h), before);
  });

  test('bodies must be JSON: text/plain, multipart, form-encoded and missing content types are 400', async () => {
    const bodyRoutes = [
      { method: 'POST', path: '/v1/hooks' },
      { method: 'POST', path: `/v1/hooks/${hookId}/test` },
      { method: 'DELETE', path: `/v1/hooks/${hookId}` },
    ];
    const valid = JSON.stringify({ target_url: 'http://127.0.0.1:9/h', events: [] });
    for (const { method, path } of bodyRoutes) {
      const label = `${method} ${path}`;
      await refused(
        `${label} text/plain`,
        { method, path, headers: { 'content-type': 'text/plain' }, body: valid },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} text/plain; charset`,
        { method, path, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: valid },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} multipart`,
        {
          method,
          path,
          headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
          body: `--xyz\r\nContent-Disposition: form-data; name="target_url"\r\n\r\nhttp://127.0.0.1:9/h\r\n--xyz--\r\n`,
        },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} form-encoded`,
        {
          method,
          path,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'target_url=http%3A%2F%2F127.0.0.1%3A9%2Fh',
        },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} application/jsonx`,
        { method, path, headers: { 'content-type': 'application/jsonx' }, body: valid },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} no content type`,
        { method, path, body: valid, raw: true },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} malformed JSON`,
        { method, path, headers: JSON_CT, body: '{"a":' },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} prototype poisoning`,
        { method, path, headers: JSON_CT, body: '{"__proto__":{"polluted":true}}' },
        { status: 400, code: 'invalid_request' },
      );
      await refused(
        `${label} 2 MB`,
        { method, path, headers: JSON_CT, body: TWO_MB },
        { status: 413, code: 'payload_too_large' },
      );
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
  });

  test('bad Idempotency-Key values are 400 invalid_request before anything is written', async () => {
    const targets = [
      {
        method: 'POST',
        path: '/v1/hooks',
        body: JSON.stringify({ target_url: 'http://127.0.0.1:9/idem', events: [] }),
      },
      { method: 'POST', path: `/v1/hooks/${hookId}/test`, body: undefined },
      { method: 'DELETE', path: `/v1/hooks/${hookId}`, body: undefined },
    ];
    for (const t of targets) {
      for (const [label, value, raw] of BAD_IDEMPOTENCY_KEYS) {
        const { body } = await refused(
          `${t.method} ${t.path} Idempotency-Key ${label}`,
          {
            method: t.method,
            path: t.path,
            headers: { ...(t.body ? JSON_CT : {}), 'idempotency-key': value },
            body: t.body,
            raw,
          },
          { status: 400, code: 'invalid_request' },
        );
        assert.equal(body.meta?.field, 'Idempotency-Key');
      }
    }
  });

  test('bad ids in paths are 4xx and touch nothing', async () => {
    const idRoutes = [
      (id: string) => ({ method: 'DELETE', path: `/v1/hooks/${id}` }),
      (id: string) => ({ method: 'POST', path: `/v1/hooks/${id}/test` }),
      (id: string) => ({ method: 'GET', path: `/v1/hooks/${id}/deliveries` }),
    ];
    for (const route of idRoutes) {
      for (const [label, id, o] of BAD_IDS) {
        const req = route(id);
        await refused(`${req.method} ${label}`, { ...req, raw: o.raw }, o.code ? { code: o.code } : {});
      }
      // A hook of another workspace is indistinguishable from a missing one.
      await refused(`${route('x').method} another workspace's hook`, route(otherHookId), {
        status: 404,
        code: 'not_found',
      });
      await refused(`${route('x').method} upper-cased id`, route(hookId.toUpperCase()), {
        status: 404,
        code: 'not_found',
      });
    }
  });

  test('odd Unicode in every string field is refused cleanly or stored intact, never a 5xx', async () => {
    for (const [label, s] of ODD_STRINGS) {
      // In target_url: refused unless it is still a valid http(s) URL after WHATWG parsing.
      for (const url of [s, `http://127.0.0.1:9/${s}`, `http://${s}.example/`]) {
        const body = JSON.stringify({ target_url: url, events: [] });
        const before = await counts(h);
        const r = await send({ method: 'POST', path: '/v1/hooks', headers: JSON_CT, body });
        if (r.status === 201) {
          const stored = new URL(r.json.target_url);
          assert.match(stored.protocol, /^https?:$/);
          assert.equal(stored.username + stored.password, '');
          assert.ok(r.json.target_url.length <= 2048, 'r.json.target_url.length <= 2048');
          assert.deepEqual(await counts(h), { ...before, hooks: before.hooks + 1, liveHooks: before.liveHooks + 1 });
        } else {
          assertCatalogueError(r, `odd target_url ${label}`);
          assert.deepEqual(await counts(h), before);
        }
      }
      // As a JSON key, too.
      await refused(
        `odd key ${label}`,
        {
          method: 'POST',
          path: '/v1/hooks',
          headers: JSON_CT,
          body: JSON.stringify({ target_url: 'http://127.0.0.1:9/h', [s]: 1 }),
        },
        { status: 400 },
      );
    }
    // Raw bytes that are not UTF-8 at all.
    await refused(
      'invalid UTF-8 bytes',
      {
        method: 'POST',
        path: '/v1/hooks',
        headers: JSON_CT,
        body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
      },
      { status: 400 },
    );
    await refused(
      'UTF-16 body',
      {
        method: 'POST',
        path: '/v1/hooks',
        headers: { 'content-type': 'application/json; charset=utf-16' },
        body: Buffer.from('{"target_url":"http://127.0.0.1:9/h"}', 'utf16le'),
      },
      { status: 400 },
    );
  });

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

  test('after the barrage: the server still serves, and the hook every bad request aimed at is intact', async () => {
    const me = await send({ method: 'GET', path: '/v1/me' });
    assert.equal(me.status, 200, me.text);
    assert.deepEqual(Object.keys(me.json).sort(), ['id', 'name', 'slug', 'tier']);
    const list = await send({ method: 'GET', path: '/v1/hooks' });
    assert.equal(list.status, 200);
    assert.ok(
      list.json.some((x: { id: string }) => x.id === hookId),
      'the targeted hook survived every bad DELETE',
    );
    // The counters used above do see real writes: one valid test send adds one event and one delivery.
    const before = await counts(h);
    const t = await send({ method: 'POST', path: `/v1/hooks/${hookId}/test` });
    assert.equal(t.status, 202, t.text);
    assert.deepEqual(await counts(h), { ...before, events: before.events + 1, deliveries: before.deliveries + 1 });
    const del = await send({ method: 'DELETE', path: `/v1/hooks/${hookId}` });
    assert.equal(del.status, 204);
    assert.equal((await counts(h)).liveHooks, before.liveHooks - 1);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
  });
});
