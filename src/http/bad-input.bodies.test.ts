// Bad bodies, values, Idempotency-Keys and path ids at the hook routes: each a catalogue 4xx that writes nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BAD_EVENTS,
  BAD_IDEMPOTENCY_KEYS,
  BAD_IDS,
  BAD_TARGET_URLS,
  HUNDRED_KB,
  JSON_CT,
  MALFORMED_JSON,
  ODD_STRINGS,
  POISON,
  TWO_MB,
  WRONG_TYPE_BODIES,
} from './testing/bad-values.js';
import {
  assertCatalogueError,
  counts,
  h,
  hookId,
  otherHookId,
  rawExchange,
  refused,
  send,
  testAfterTheBarrage,
  token,
  useBadInputServer,
} from './testing/bad-input.js';

describe('bad input at every route', () => {
  useBadInputServer();

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

  testAfterTheBarrage();
});
