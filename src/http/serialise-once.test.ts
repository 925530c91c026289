import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { serialiseOnce } from './serialise-once.js';

test("serialiseOnce: the route's response schema serialises the view, once per value", async () => {
  const app = Fastify({ logger: false });
  const send = serialiseOnce();
  const values = [{ n: 1 }, { n: 2 }];
  let views = 0;
  let which = 0;
  app.get(
    '/x',
    { schema: { response: { 200: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } } } } },
    (_req, reply) => {
      const value = values[which]!;
      return send(reply, value, () => (views++, [{ n: value.n, secret: 'not in the schema' }]));
    },
  );
  try {
    const first = await app.inject('/x');
    assert.equal(first.statusCode, 200);
    assert.equal(first.body, '[{"n":1}]', 'properties outside the schema are dropped, as the schema serialiser does');
    assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal((await app.inject('/x')).body, first.body);
    assert.equal(views, 1, 'built once for one value');
    which = 1;
    assert.equal((await app.inject('/x')).body, '[{"n":2}]');
    assert.equal(views, 2);
  } finally {
    await app.close();
  }
});
