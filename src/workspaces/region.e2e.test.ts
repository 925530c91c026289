// The hosting region (SIGNET_REGION): recorded on a workspace when it is created and kept; GET /v1/me carries it as
// an additional `region` field when the workspace has one and nothing new otherwise. On both databases: the harness
// (the app on a real port), and the real `signet workspace create` and `signet serve` under different settings.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKey } from '../keys/keys.repo.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { runSignet, startServer, type ChildServer } from '../testing/child-server.js';
import { bothDatabases, freshPostgres } from '../testing/services.js';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { createWorkspace } from './workspaces.repo.js';

const databases = await bothDatabases();
const INTERFACE_FIELDS = ['id', 'name', 'slug', 'tier'];

for (const d of databases) {
  describe(`GET /v1/me and the region (${d.name})`, { skip: d.skip }, () => {
    let plain: Harness;
    let regional: Harness;
    before(async () => {
      plain = await startHarness({ database: d.database });
      regional = await startHarness({ database: d.database, env: { SIGNET_REGION: 'eu-central' } });
    });
    after(async () => {
      await plain?.close();
      await regional?.close();
    });

    test('without SIGNET_REGION: exactly the interface’s fields, nothing new', async () => {
      const t = await plain.tenant('business');
      const r = await plain.request('GET', '/v1/me', { token: t.token });
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.json).sort(), INTERFACE_FIELDS);
      const row = await plain.db.kysely
        .selectFrom('workspaces')
        .selectAll()
        .where('id', '=', t.workspaceId)
        .executeTakeFirstOrThrow();
      assert.equal(row.region, null);
    });

    test('with SIGNET_REGION: recorded at creation, shown as `region`; a workspace keeps what it was given', async () => {
      const t = await regional.tenant('business');
      const r = await regional.request('GET', '/v1/me', { token: t.token });
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.json).sort(), [...INTERFACE_FIELDS, 'region'].sort());
      assert.equal(r.json.region, 'eu-central');
      assert.equal(r.headers['ratelimit-limit'], undefined, 'still exempt from the rate limit');

      // Made while the deployment said something else (or nothing): the stored value is what is shown.
      for (const region of ['us-east', null]) {
        const ws = await createWorkspace(regional.db.kysely, { name: 'Elsewhere', tier: 'business', region }, 0);
        const k = await createKey(regional.db.kysely, { workspaceId: ws.id, legacy: false }, 0);
        const me = await regional.request('GET', '/v1/me', { token: k.plaintext });
        assert.equal(me.status, 200);
        if (region) assert.equal(me.json.region, region);
        else assert.deepEqual(Object.keys(me.json).sort(), INTERFACE_FIELDS);
      }
    });

    test('the OpenAPI document shows `region` as optional, documented as a Signet addition', async () => {
      const doc = (await plain.request('GET', '/v1/openapi.json')).json;
      const schema = doc.paths['/v1/me'].get.responses['200'].content['application/json'].schema;
      assert.deepEqual([...schema.required].sort(), INTERFACE_FIELDS);
      assert.equal(schema.properties.region.type, 'string');
      assert.match(schema.properties.region.description, /Signet addition/);
    });
  });

  describe(`signet workspace create records SIGNET_REGION; signet serve shows it (${d.name})`, { skip: d.skip }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-region-'));
    let db: Db;
    let url = `sqlite:${path.join(dir, 'signet.db')}`;
    let drop = async () => undefined as void;
    let server: ChildServer | undefined;
    before(async () => {
      if (typeof d.database === 'object') {
        const pg = await freshPostgres(d.database.postgresAdminUrl);
        ({ db, url } = pg);
        drop = pg.drop;
      } else db = await openDb(url);
    });
    after(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      if (typeof d.database === 'object') await drop();
      else await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('a workspace keeps the region it was created under when the setting changes', async () => {
      const create = async (name: string, env: Record<string, string>) => {
        const r = await runSignet(dir, ['workspace', 'create', '--name', name, '--json'], {
          DATABASE_URL: url,
          ...env,
        });
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout).workspace;
      };
      const [eu, none] = await Promise.all([
        create('Frankfurt', { SIGNET_REGION: 'eu-central' }),
        create('Nowhere', {}),
      ]);
      assert.equal(eu.region, 'eu-central');
      assert.deepEqual(Object.keys(none).sort(), INTERFACE_FIELDS);
      const bad = await runSignet(dir, ['workspace', 'create', '--name', 'X', '--json'], {
        DATABASE_URL: url,
        SIGNET_REGION: 'EU Central',
      });
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr.trim(), /^signet: SIGNET_REGION must be/);
      assert.equal(bad.stderr.trim().split('\n').length, 1);

      server = await startServer(dir, { env: { DATABASE_URL: url, SIGNET_REGION: 'us-east' } });
      const me = async (workspaceId: string) => {
        const k = await createKey(db.kysely, { workspaceId, legacy: false }, Date.now());
        const res = await fetch(`http://127.0.0.1:${server!.port}/v1/me`, {
          headers: { authorization: `Bearer ${k.plaintext}` },
        });
        assert.equal(res.status, 200);
        return (await res.json()) as Record<string, unknown>;
      };
      assert.equal((await me(eu.id)).region, 'eu-central', 'kept, though the deployment now says us-east');
      assert.deepEqual(Object.keys(await me(none.id)).sort(), INTERFACE_FIELDS, 'none recorded, none invented');
    });
  });
}

describe('SIGNET_REGION on a database before migration 022 (SIGNET_AUTO_MIGRATE=0)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-region-old-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('workspace create refuses with one line naming the migration; without a region it still works', async () => {
    const url = `sqlite:${path.join(dir, 'signet.db')}`;
    const db = await openDb(url, { migrate: false });
    await migrateToLatest(db, '021-purge');
    await db.close();
    const env = { DATABASE_URL: url, SIGNET_AUTO_MIGRATE: '0' };
    const refused = await runSignet(dir, ['workspace', 'create', '--name', 'X', '--json'], {
      ...env,
      SIGNET_REGION: 'eu-central',
    });
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      /^signet: SIGNET_REGION needs migration 022-workspace-face; run signet migrate first\n$/,
    );
    const plain = await runSignet(dir, ['workspace', 'create', '--name', 'Y', '--json'], env);
    assert.equal(plain.code, 0, plain.stderr);
    const ws = JSON.parse(plain.stdout).workspace;
    assert.deepEqual(Object.keys(ws).sort(), INTERFACE_FIELDS);

    // A server ahead of its schema (and told a region) still authenticates and answers /v1/me, without a region.
    const old = await openDb(url, { migrate: false });
    const k = await createKey(old.kysely, { workspaceId: ws.id, legacy: false }, Date.now());
    await old.close();
    const server = await startServer(dir, { env: { ...env, SIGNET_REGION: 'eu-central' } });
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/v1/me`, {
        headers: { authorization: `Bearer ${k.plaintext}` },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys((await res.json()) as object).sort(), INTERFACE_FIELDS);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
