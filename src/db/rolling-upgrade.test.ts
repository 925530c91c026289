// A rolling upgrade: the new code started with SIGNET_AUTO_MIGRATE=0 on a database whose schema predates a feature
// answers that feature's catalogued 503 with Retry-After on its routes only (templates: review_unavailable; embedded
// sessions: embedding_unavailable) and keeps serving every other route; once `signet migrate` has run, the feature
// works without a restart. A real `signet serve` child on each database, from two older schemas.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, type Db } from './db.js';
import { migrateToLatest, type MigrationName } from './migrate.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { createKey, setAllowedOrigins } from '../keys/keys.repo.js';
import { runSignet, startServer, type ChildServer } from '../testing/child-server.js';
import { b64 } from '../testing/e2e.js';
import { freshPostgres, postgresForTests } from '../testing/services.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { templateBody } from '../templates/testing/fixtures.js';

const pg = await postgresForTests();

async function oldSchema(kind: 'sqlite' | 'postgres', dir: string, upTo: MigrationName) {
  if (kind === 'postgres') {
    const fresh = await freshPostgres((pg as { url: string }).url, upTo);
    return { db: fresh.db, url: fresh.url, drop: fresh.drop };
  }
  const url = `sqlite:${path.join(dir, 'signet.db')}`;
  const db: Db = await openDb(url, { migrate: false });
  await migrateToLatest(db, upTo);
  return { db, url, drop: async () => undefined };
}

// From before templates (both features wait for the migration) and from before sessions (only embedding waits).
const UPGRADES = [
  { from: '004-signing', waiting: ['templates', 'embedding'] },
  { from: '005-templates', waiting: ['embedding'] },
] as const;

for (const kind of ['sqlite', 'postgres'] as const) {
  for (const { from, waiting } of UPGRADES) {
    describe(
      `rolling upgrade from ${from} (${kind})`,
      { skip: kind === 'postgres' && 'skip' in pg ? pg.skip : false },
      () => {
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

        test(`503 on ${waiting.join(' and ')} routes only, until signet migrate`, async () => {
          const old = await oldSchema(kind, dir, from);
          drop = old.drop;
          const ws = await createWorkspace(old.db.kysely, { name: 'Upgrade', tier: 'enterprise' }, Date.now());
          const key = await createKey(old.db.kysely, { workspaceId: ws.id, legacy: false }, Date.now());
          await setAllowedOrigins(old.db.kysely, key.key.id, ['https://app.example']);
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

          // Every other route serves: a signing request is created and read.
          assert.equal((await call('GET', '/v1/me')).status, 200);
          const sr = await call('POST', '/v1/signing-requests', {
            signers: [{ role: 'client', email: 'c@example.com', name: 'C' }],
            file: { name: 'a.pdf', content_base64: b64(await makePdf({ text: [['Hello']] })) },
            placement: 'auto_append',
          });
          assert.equal(sr.status, 201, JSON.stringify(sr.json));
          assert.equal((await call('GET', `/v1/documents/${sr.json.document_id}`)).status, 200);
          const session = {
            signing_request_id: sr.json.signing_requests[0].id,
            origin: 'https://app.example',
            ttl_seconds: 300,
            locale: 'en',
          };

          const routes = {
            templates: [
              ['POST', '/v1/templates', await templateBody(), 'review_unavailable'],
              ['GET', '/v1/templates', undefined, 'review_unavailable'],
              ['POST', '/v1/templates/tpl_x/instantiate', { recipients: [] }, 'review_unavailable'],
              ['POST', '/v1/template-instances/tin_x/confirm', {}, 'review_unavailable'],
            ],
            // Even a body that would be refused gets the 503 first: nothing is validated against a missing table.
            embedding: [
              ['POST', '/v1/embedded/sign-sessions', session, 'embedding_unavailable'],
              ['POST', '/v1/embedded/sign-sessions', { ttl_seconds: 5 }, 'embedding_unavailable'],
            ],
          } as const;
          for (const feature of waiting) {
            for (const [method, p, body, code] of routes[feature]) {
              const r = await call(method, p, body);
              assert.equal(r.status, 503, `${method} ${p}`);
              assert.equal(r.json.code, code);
              assert.ok(Number(r.headers.get('retry-after')) > 0, "Number(r.headers.get('retry-after')) > 0");
            }
          }
          if (!(waiting as readonly string[]).includes('templates'))
            assert.equal((await call('GET', '/v1/templates')).status, 200, 'templates were already migrated');

          const migrated = await runSignet(dir, ['migrate'], env);
          assert.equal(migrated.code, 0, migrated.stderr);
          const created = await call('POST', '/v1/templates', await templateBody());
          assert.equal(created.status, 201, JSON.stringify(created.json));
          const minted = await call('POST', '/v1/embedded/sign-sessions', session);
          assert.equal(minted.status, 201, JSON.stringify(minted.json));
          const page = await fetch(minted.json.url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${server.port}`));
          assert.equal(page.status, 200);
        });
      },
    );
  }
}
