// An interrupted rotation on the SQLite default: DATA_DIR/secret.key.new holds the new key and some values are under
// it, the rest under the old one. The next start finishes it: everything under the new key, which replaces
// secret.key; every secret still opens to what it was. Two processes generating the first key agree on one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { openDb } from '../db/db.js';
import { ManualClock } from '../lib/clock.js';
import { decryptSecret, encryptSecret, keyIdOf, keyringOf, storedKeyId } from '../lib/secret-box.js';
import { readKeyFile } from '../pki/key-files.js';
import { loadOrCreatePki } from '../pki/pki.js';
import { createHook, replaceSecret } from '../webhooks/hooks.repo.js';
import { createWorkspace } from '../workspaces/workspaces.repo.js';
import { createKeyFile, KEY_FILE, NEW_KEY_FILE, prepareSecrets, resolveKeys } from './keyring.js';

test('the next start finishes an interrupted rotation', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-rotate-'));
  const db = await openDb(`sqlite:${path.join(dir, 'signet.db')}`, { migrate: true });
  t.after(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const config = loadConfig({ DATA_DIR: dir });
  const old = (await prepareSecrets(config, db))!;
  const ws = await createWorkspace(db.kysely, { name: 'W', tier: 'business' }, 1);
  const input = { workspaceId: ws.id, targetUrl: 'https://example.com/h', events: [], source: 'api' as const };
  const [a, b] = [await createHook(db.kysely, input, 1, old), await createHook(db.kysely, input, 2, old)];
  await loadOrCreatePki({ dataDir: dir, clock: new ManualClock(Date.now()), keyring: old });
  const sealPem = await readKeyFile(dir, path.join(dir, 'pki', 'seal.key'), old);

  // Interrupted: the new key on disk, hook a already under it, hook b and the key files not yet.
  const next = randomBytes(32);
  fs.writeFileSync(path.join(dir, NEW_KEY_FILE), next.toString('base64'), { mode: 0o600 });
  const stored = async (id: string) =>
    (await db.kysely.selectFrom('hooks').select('secret').where('id', '=', id).executeTakeFirstOrThrow()).secret;
  const aNext = encryptSecret(keyringOf(next), 'hook-secret', a.id, a.secret);
  assert.ok(await replaceSecret(db.kysely, a.id, await stored(a.id), aNext), 'hook a moved');

  const ring = (await prepareSecrets(config, db))!;
  assert.equal(ring.primary.id, keyIdOf(next));
  assert.ok(!fs.existsSync(path.join(dir, NEW_KEY_FILE)), 'secret.key.new replaced secret.key');
  assert.equal((await resolveKeys(config))!.primary.toString('hex'), next.toString('hex'));
  for (const h of [a, b]) {
    assert.equal(storedKeyId(await stored(h.id)), keyIdOf(next), h.id);
    assert.equal(decryptSecret(keyringOf(next), 'hook-secret', h.id, await stored(h.id)), h.secret);
  }
  const sealFile = path.join(dir, 'pki', 'seal.key');
  assert.equal(storedKeyId(fs.readFileSync(sealFile, 'utf8')), keyIdOf(next));
  assert.equal(await readKeyFile(dir, sealFile, keyringOf(next)), sealPem);
});

test('concurrent first starts agree on one generated key', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-keyfile-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, KEY_FILE);
  const keys = await Promise.all(Array.from({ length: 8 }, () => createKeyFile(file)));
  assert.equal(new Set(keys.map((k) => k.toString('hex'))).size, 1);
  assert.deepEqual(fs.readdirSync(dir), [KEY_FILE]);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
});
