// Bad input at every /v1 route, table-driven and property-based. Every answer must be a 4xx whose body is exactly
// the catalogue's error shape ({ error, code, meta? }, + `ip` for ip_not_allowed only), never a 5xx, and nothing may
// be half-written: hook, delivery and event rows change only when the answer is a 2xx. Here the gate and routing:
// credentials, request heads, unknown routes, the retired POST /v1/documents; bodies, values and ids in
// bad-input.bodies.test.ts; generated input in bad-input.properties.test.ts.
import { describe, test } from 'node:test';
import { HUNDRED_KB, JSON_CT, MALFORMED_JSON, ODD_STRINGS, POISON, TWO_MB } from './testing/bad-values.js';
import { hookId, refused, routes, testAfterTheBarrage, useBadInputServer, type Req } from './testing/bad-input.js';

describe('bad input at every route', () => {
  useBadInputServer();

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

  testAfterTheBarrage();
});
