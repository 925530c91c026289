// A rolling upgrade to migration 012: the new code on a schema without it (SIGNET_AUTO_MIGRATE=0) creates signing
// requests without `reminders` as before (their answer shows none), refuses one that asks for reminders with 503
// service_unavailable and Retry-After (nothing created), and its reminder jobs report `skipped`; once the migration
// has run, the same process accepts reminders without a restart. The real app on a real port, on SQLite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { loadConfig } from '../config.js';
import { openDb, type Db } from '../db/db.js';
import { migrateToLatest } from '../db/migrate.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { createKey } from '../keys/keys.repo.js';
import { ManualClock } from '../lib/clock.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { b64 } from '../testing/e2e.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';

const PDF = b64(await makePdf({ text: [['Agreement']] }));

describe('reminders on a schema before migration 012', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-remind-upgrade-'));
  let db: Db;
  let rt: Runtime;
  let base = '';
  let token = '';
  before(async () => {
    db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`, { migrate: false });
    await migrateToLatest(db, '010-signer-copies');
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00.000Z'));
    const config = loadConfig({ DATA_DIR: dir, SIGNET_AUTO_MIGRATE: '0', LOG_LEVEL: 'silent' });
    rt = await createRuntime(config, { api: true, worker: true, clock, db, logger: false });
    await rt.app!.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(rt.app!.server.address() as { port: number }).port}`;
    const ws = await createWorkspace(db.kysely, { name: 'Upgrade', tier: 'business' }, clock.now());
    token = (await createKey(db.kysely, { workspaceId: ws.id, legacy: false }, clock.now())).plaintext;
  });
  after(async () => {
    await rt?.close();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await request(`${base}/v1/signing-requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        signers: [{ role: 'a', email: 'up@example.com', name: 'Up' }],
        file: { name: 'a.pdf', content_base64: PDF },
        placement: 'auto_append',
        ...extra,
      }),
    });
    return { status: res.statusCode, headers: res.headers, json: (await res.body.json()) as any };
  };
  const documents = async () => Number((await db.kysely.selectFrom('documents').select('id').execute()).length);

  test('old schema: plain requests work, reminders wait with 503, jobs skip; after migrating, reminders work', async () => {
    const plain = await create();
    assert.equal(plain.status, 201, JSON.stringify(plain.json));
    assert.equal(plain.json.reminders, null);
    const refused = await create({ reminders: { after_days: 2, every_days: 3 } });
    assert.equal(refused.status, 503);
    assert.equal(refused.json.code, 'service_unavailable');
    assert.equal(refused.headers['retry-after'], '30');
    assert.equal(await documents(), 1, 'nothing created');
    assert.match(String((await rt.runJob('send-reminders')).skipped), /012-reminders/);
    assert.match(String((await rt.runJob('warn-expiring')).skipped), /012-reminders/);

    await migrateToLatest(db);
    const later = await create({ reminders: { after_days: 2, every_days: 3 } });
    assert.equal(later.status, 201, JSON.stringify(later.json));
    assert.deepEqual(later.json.reminders, { after_days: 2, every_days: 3 });
    assert.deepEqual(await rt.runJob('send-reminders'), { sent: 0 });
  });
});
