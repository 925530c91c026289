// What the bad-input tests share: the catalogue-shape check, row counts, a raw-capable sender, the server and its hook.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { sql } from 'kysely';
import { catalogue } from '../../lib/errors.js';
import { setRateLimit } from '../../keys/keys.repo.js';
import { startHarness, type Harness, type Res } from '../../testing/harness.js';
import { JSON_CT } from './bad-values.js';

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

export const short = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** A 4xx whose body is exactly the catalogue shape, with a code from the catalogue at that code's status. */
export function assertCatalogueError(
  r: Res,
  label: string,
): { error: string; code: string; meta?: Record<string, unknown> } {
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

export type Counts = { hooks: number; liveHooks: number; deliveries: number; events: number; attempts: number };

export async function counts(h: Harness): Promise<Counts> {
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

export type Req = {
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

export function rawExchange(port: number, parts: Buffer[]): Promise<Res> {
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
// The server: live bindings, which each test file reads once useBadInputServer's `before` has run.

export let h: Harness;
export let send: (req: Req) => Promise<Res>;
export let token: string;
export let hookId: string;
export let otherHookId: string;

/** Starts the server with one key (its rate limit raised), one hook of its own and one of another workspace. */
export function useBadInputServer(): void {
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
}

/** Sends one bad request; it must be a catalogue 4xx (optionally a given status/code) and must write nothing. */
export async function refused(label: string, req: Req, expect: { status?: number; code?: string } = {}) {
  const before = await counts(h);
  const r = await send(req);
  const body = assertCatalogueError(r, label);
  if (expect.status !== undefined) assert.equal(r.status, expect.status, `${label}: ${short(r.text)}`);
  if (expect.code !== undefined) assert.equal(body.code, expect.code, `${label}: ${short(r.text)}`);
  assert.deepEqual(await counts(h), before, `${label}: rows changed on a ${r.status}`);
  return { r, body };
}

// Every /v1 route the app registered (those that need a key), and unknown paths, which pass the gate too.
export const routes = () => [
  ...h.app.routeList
    .filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && r.url !== '/v1/openapi.json')
    .map((r) => ({ method: r.method, path: r.url.replace(':id', hookId) })),
  { method: 'GET', path: '/v1/no-such-thing' },
  { method: 'POST', path: '/v1/no-such-thing' },
];

/** The closing test of each file: the server still serves after that file's barrage, and the hook is intact. */
export function testAfterTheBarrage(): void {
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
}
