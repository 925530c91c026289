// A rolling upgrade: the new code started with SIGNET_AUTO_MIGRATE=0 on a database whose schema predates templates
// answers 503 review_unavailable with Retry-After on the template routes and keeps serving every other route; once
// `signet migrate` has run, templates work without a restart. A real `signet serve` child on each database.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { createKey } from '../keys/keys.repo.js';
import { runSignet, startServer, type ChildServer } from '../testing/child-server.js';
import { b64 } from '../testing/e2e.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { templateBody } from './testing/fixtures.js';

const pg = await postgresForTests();

async function oldSchema(kind: 'sqlite' | 'postgres', dir: string) {
  if (kind === 'postgres') {
    const fresh = await freshPostgres((pg as { url: string }).url, '004-signing');
    return { db: fresh.db, url: fresh.url, drop: fresh.drop };
  }
  const url = `sqlite:${path.join(dir, 'signet.db')}`;
  const db: Db = await openDb(url, { migrate: false });
  await migrateToLatest(db, '004-signing');
  return { db, url, drop: async () => undefined };
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`rolling upgrade (${kind})`, { skip: kind === 'postgres' && 'skip' in pg ? pg.skip : false }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-upgrade-'));
    let server: ChildServer | undefined;
    let drop = async () => undefined as void;
    after(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('503 review_unavailable on template routes only, until signet migrate', async () => {
      const old = await oldSchema(kind, dir);
      drop = old.drop;
      const ws = await createWorkspace(old.db.kysely, { name: 'Upgrade', tier: 'enterprise' }, Date.now());
      const key = await createKey(old.db.kysely, { workspaceId: ws.id, legacy: false }, Date.now());
      await old.db.close();
      const env = { SIGNET_AUTO_MIGRATE: '0', DATABASE_URL: old.url };
      server = await startServer(dir, { env });
      const call = async (method: string, p: string, body?: unknown) => {
        const res = await fetch(`http://127.0.0.1:${server!.port}${p}`, {
          method,
          headers: {
            authorization: `Bearer ${key.plaintext}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        });
        const text = await res.text();
        return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
      };

      for (const [method, p, body] of [
        ['POST', '/v1/templates', await templateBody()],
        ['GET', '/v1/templates'],
        ['POST', '/v1/templates/tpl_x/instantiate', { recipients: [] }],
        ['POST', '/v1/template-instances/tin_x/confirm', {}],
      ] as const) {
        const r = await call(method, p, body);
        assert.equal(r.status, 503, `${method} ${p}`);
        assert.equal(r.json.code, 'review_unavailable');
        assert.ok(Number(r.headers.get('retry-after')) > 0);
      }
      assert.equal((await call('GET', '/v1/me')).status, 200);
      const sr = await call('POST', '/v1/signing-requests', {
        signers: [{ role: 'client', email: 'c@example.com', name: 'C' }],
        file: { name: 'a.pdf', content_base64: b64(await makePdf({ text: [['Hello']] })) },
        placement: 'auto_append',
      });
      assert.equal(sr.status, 201, JSON.stringify(sr.json));
      assert.equal((await call('GET', `/v1/documents/${sr.json.document_id}`)).status, 200);

      const migrated = await runSignet(dir, ['migrate'], env);
      assert.equal(migrated.code, 0, migrated.stderr);
      const created = await call('POST', '/v1/templates', await templateBody());
      assert.equal(created.status, 201, JSON.stringify(created.json));
    });
  });
}
