import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { lazyCompilers } from './lazy-compilers.js';
import { startHarness } from '../testing/harness.js';

const AJV = { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true } };

function appWith(schema: object, lazy?: ReturnType<typeof lazyCompilers>): FastifyInstance {
  const app = Fastify({
    ajv: AJV,
    ...(lazy
      ? {
          schemaController: {
            compilersFactory: { buildValidator: lazy.buildValidator, buildSerializer: lazy.buildSerializer },
          },
        }
      : {}),
  } as never) as unknown as FastifyInstance;
  app.post('/things', { schema }, async (req) => ({ ...(req.body as object), secret: 'never sent' }));
  return app;
}

const SCHEMA = {
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: { type: 'string', minLength: 2 }, size: { type: 'integer', default: 3 } },
  },
  response: { 200: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } } } },
};

test('validation and serialisation are those of the default compilers', async () => {
  const eager = appWith(SCHEMA);
  const lazy = appWith(SCHEMA, lazyCompilers());
  for (const payload of [{ name: 'ok' }, { name: 'x', extra: 1 }, { size: 'big' }, [], { name: 'fine', size: 9 }]) {
    const [a, b] = await Promise.all(
      [eager, lazy].map((app) => app.inject({ method: 'POST', url: '/things', payload })),
    );
    assert.equal(b!.statusCode, a!.statusCode, JSON.stringify(payload));
    assert.equal(b!.body, a!.body, JSON.stringify(payload));
  }
  const ok = await lazy.inject({ method: 'POST', url: '/things', payload: { name: 'ok' } });
  assert.deepEqual(ok.json(), { name: 'ok', size: 3 }, 'defaults applied, the undeclared field not serialised');
  await Promise.all([eager.close(), lazy.close()]);
});

test('nothing compiles at start; compileAll() surfaces a schema that cannot compile', async () => {
  const lazy = lazyCompilers();
  const app = appWith({ body: { type: 'object', properties: { n: { type: 'no-such-type' } } } }, lazy);
  await app.ready(); // an eager app refuses to start with this schema
  assert.throws(() => lazy.compileAll(), /no-such-type|type/);
  await app.close();
});

test("every route of Signet's app compiles", async () => {
  const h = await startHarness();
  try {
    h.app.compileSchemas();
  } finally {
    await h.close();
  }
});
