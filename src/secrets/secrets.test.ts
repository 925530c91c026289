// Secrets at rest on both databases, through the real start-up step, the real dispatcher and a real receiver: hook
// secrets and the PKI's private keys are nowhere in a dump of the database or in DATA_DIR's bytes (plain ones from
// before are brought under the key at start); deliveries verify with the secret shown at creation, before and after
// `signet secrets rotate`, and a seal made after the rotation verifies; a key that cannot open what is stored, or
// none on PostgreSQL over encrypted values, stops start with one line.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { openDb } from '../db/db.js';
import { keyIdOf } from '../lib/secret-box.js';
import { pemToDer } from '../pki/cms.js';
import { existingGenerations, KEY_FILES, readKeyFile } from '../pki/key-files.js';
import { loadOrCreatePki } from '../pki/pki.js';
import { checkCms } from '../pki/verify-cms.js';
import { sealPdf } from '../documents/pdf/seal.work.js';
import { extractSignature, makeTextPdf } from '../documents/pdf/testing/seal-fixtures.js';
import { createRuntime } from '../runtime.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { dataDirBytes, oneErrorLine, oneJson, startReceiver, verifySignature } from '../cli/testing/cli.js';
import { runSignet } from '../testing/child-server.js';
import { createDispatcher } from '../webhooks/dispatcher.js';
import { createHook } from '../webhooks/hooks.repo.js';
import { databaseBytes } from './testing/dump.js';
import { configuredKeyring, KEY_FILE, prepareSecrets } from './keyring.js';
import { rotateSecrets } from './rotate.js';

for (const d of await bothDatabases()) {
  describe(`secrets at rest (${d.name})`, { skip: d.skip }, () => {
    const pg = d.database !== 'sqlite';
    // PostgreSQL takes the key from SIGNET_SECRET_KEY; SQLite generates DATA_DIR/secret.key.
    const env: Record<string, string> = pg ? { SIGNET_SECRET_KEY: randomBytes(32).toString('base64') } : {};
    let h: Harness;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    let token: string;
    const secrets = new Map<string, string>(); // hook id → the secret shown at creation
    before(async () => {
      h = await startHarness({ database: d.database, secretsAtRest: true, env, start: Date.now() });
      rx = await startReceiver();
      token = (await h.tenant()).token;
    });
    after(async () => {
      await rx?.close();
      await h?.close();
    });
    const dataDir = () => h.config.dataDir;

    /** A test event to every hook, sent by a dispatcher with `config`'s keyring; each verifies with its secret. */
    async function deliverAndVerify(config = h.config) {
      const before = rx.received.length;
      for (const id of secrets.keys()) {
        assert.equal((await h.request('POST', `/v1/hooks/${id}/test`, { token })).status, 202);
      }
      const keyring = await configuredKeyring(config);
      const dispatcher = createDispatcher({
        db: h.db,
        clock: h.clock,
        workerId: 't',
        allowPrivateNetwork: true,
        keyring,
      });
      assert.equal(await dispatcher.runOnce(), secrets.size);
      await dispatcher.stop();
      const got = rx.received.slice(before);
      assert.equal(got.length, secrets.size);
      for (const r of got) {
        const event = JSON.parse(r.body) as { data: { hook_id?: string } } & Record<string, unknown>;
        const header = r.headers['x-service-signature'] as string;
        // The event names no hook: each delivery must verify with exactly one of the secrets shown at creation.
        const verified = [...secrets.values()].filter((s) => {
          try {
            verifySignature(header, s, r.body);
            return true;
          } catch {
            return false;
          }
        });
        assert.equal(verified.length, 1, `delivery ${JSON.stringify(event).slice(0, 80)} verifies with its secret`);
      }
    }

    /** What must be nowhere at rest: every hook secret, every PKI private key (PEM body and DER). */
    async function assertNothingInClear(config = h.config) {
      const keyring = await configuredKeyring(config);
      const needles: [string, Buffer][] = [...secrets].map(([id, s]) => [`secret of ${id}`, Buffer.from(s)]);
      for (const g of await existingGenerations(dataDir())) {
        for (const name of KEY_FILES) {
          const pem = await readKeyFile(dataDir(), path.join(g.dir, name), keyring);
          const der = Buffer.from(pemToDer(pem));
          needles.push([`${name} DER`, der], [`${name} base64`, Buffer.from(der.toString('base64').slice(0, 64))]);
        }
      }
      assert.ok(needles.length >= 5, 'secrets and keys to look for');
      const [db, files] = [await databaseBytes(h.db), dataDirBytes(dataDir())];
      for (const [what, bytes] of needles) {
        assert.equal(db.indexOf(bytes), -1, `${what} is in the database`);
        assert.equal(files.indexOf(bytes), -1, `${what} is in DATA_DIR`);
      }
    }

    test('hook secrets and PKI keys are encrypted at rest, plain ones from before brought under the key at start', async () => {
      if (!pg) assert.equal(fs.statSync(path.join(dataDir(), KEY_FILE)).mode & 0o777, 0o600);
      // From before encryption: a plain hook row and a plain PKI.
      const ws = (await h.db.kysely.selectFrom('api_keys').select('workspace_id').executeTakeFirstOrThrow())
        .workspace_id;
      const old = await createHook(h.db.kysely, { workspaceId: ws, targetUrl: rx.url, events: [], source: 'api' }, 1);
      secrets.set(old.id, old.secret);
      await loadOrCreatePki({ dataDir: dataDir(), clock: h.clock });
      assert.match(fs.readFileSync(path.join(dataDir(), 'pki', 'seal.key'), 'utf8'), /BEGIN PRIVATE KEY/);
      const created = await h.request('POST', '/v1/hooks', { token, body: { target_url: rx.url } });
      assert.equal(created.status, 201, created.text);
      assert.match(created.json.secret, /^whsec_/);
      secrets.set(created.json.id, created.json.secret);

      // A start brings the plain ones under the key.
      await prepareSecrets(h.config, h.db);
      const stored = await h.db.kysely.selectFrom('hooks').select(['id', 'secret']).execute();
      for (const r of stored) assert.match(r.secret, /^enc:v1:[0-9a-f]{8}:/, r.id);
      assert.match(fs.readFileSync(path.join(dataDir(), 'pki', 'seal.key'), 'utf8'), /^enc:v1:/);
      assert.equal(fs.statSync(path.join(dataDir(), 'pki', 'seal.key')).mode & 0o777, 0o600);
      await assertNothingInClear();
      await deliverAndVerify();
    });

    test('after `signet secrets rotate` deliveries verify, a new seal verifies, and the old key refuses start', async () => {
      let oldConfig = h.config;
      const oldId = (await configuredKeyring(oldConfig))!.primary.id;
      let newConfig = h.config;
      if (pg) {
        // SIGNET_SECRET_KEY: the new key from a file, then the operator swaps the variable.
        const next = randomBytes(32).toString('hex');
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signet-key-')), 'new.key');
        fs.writeFileSync(file, next, { mode: 0o600 });
        const r = await rotateSecrets(h.config, h.db, file);
        assert.deepEqual(r, {
          key_id: keyIdOf(Buffer.from(next, 'hex')),
          previous_key_id: oldId,
          hooks: secrets.size,
          key_files: 3,
          key_file: null,
        });
        newConfig = loadConfig({ DATA_DIR: dataDir(), SIGNET_SECRET_KEY: next });
      } else {
        // The SQLite default: the real command writes a new generated key into DATA_DIR.
        const saved = fs.readFileSync(path.join(dataDir(), KEY_FILE), 'utf8');
        const r = oneJson(await runSignet(dataDir(), ['secrets', 'rotate', '--json']), 'secrets rotate');
        assert.equal(r.previous_key_id, oldId);
        assert.notEqual(r.key_id, oldId);
        assert.deepEqual([r.hooks, r.key_files, r.key_file], [secrets.size, 3, path.join(dataDir(), KEY_FILE)]);
        assert.notEqual(fs.readFileSync(path.join(dataDir(), KEY_FILE), 'utf8'), saved);
        assert.ok(!fs.existsSync(path.join(dataDir(), `${KEY_FILE}.new`)), 'the rotation finished');
        assert.equal(fs.statSync(path.join(dataDir(), KEY_FILE)).mode & 0o777, 0o600);
        // The old key, given as SIGNET_SECRET_KEY, no longer opens anything.
        oldConfig = loadConfig({ DATA_DIR: dataDir(), SIGNET_SECRET_KEY: saved.trim() });
      }
      assert.equal((await configuredKeyring(newConfig))!.primary.id === oldId, false);
      await assertNothingInClear(newConfig);
      await deliverAndVerify(newConfig);

      const pki = await loadOrCreatePki({
        dataDir: dataDir(),
        clock: h.clock,
        keyring: await configuredKeyring(newConfig),
      });
      const { pdf } = await sealPdf(await makeTextPdf(1), { seal: pki.seal, tsa: pki.localTsa, clock: h.clock });
      const { signedBytes, cmsDer } = extractSignature(pdf);
      const check = await checkCms(cmsDer, [signedBytes], 'signature');
      assert.ok(check.intact, 'the seal verifies');
      assert.ok(check.timestamp?.intact, 'its timestamp verifies');
      assert.deepEqual(Buffer.from(check.signerCertDer!), Buffer.from(pki.seal.certDer));

      await assert.rejects(
        createRuntime(oldConfig, { api: true, worker: true, db: h.db, clock: h.clock, logger: false }),
        (e: Error) =>
          /^SIGNET_SECRET_KEY \(key id [0-9a-f]{8}\) cannot open the secret of hook hook_\w+: it is encrypted under key id [0-9a-f]{8}, which is not the configured key$/.test(
            e.message,
          ),
      );
    });

    test('a wrong key stops `signet serve` with one line; no key on PostgreSQL: refused over encrypted values, plain with a warning otherwise', async () => {
      if (!pg) {
        const wrong = randomBytes(32).toString('base64');
        const line = oneErrorLine(
          await runSignet(dataDir(), ['serve'], { SIGNET_SECRET_KEY: wrong, PORT: '0' }),
          'serve',
        );
        assert.match(line, /^signet: SIGNET_SECRET_KEY \(key id [0-9a-f]{8}\) cannot open the secret of hook /);
        assert.ok(!line.includes(wrong), 'the key is not echoed');
        return;
      }
      const noKey = loadConfig({ DATA_DIR: dataDir(), DATABASE_URL: 'postgres://127.0.0.1:1/unused' });
      await assert.rejects(
        prepareSecrets(noKey, h.db),
        /^Error: SIGNET_SECRET_KEY is not set but the webhook secrets in the database are encrypted; set it$/,
      );
      const plain = await openDb('sqlite::memory:', { migrate: true });
      const warned: string[] = [];
      const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-nokey-'));
      try {
        const r = await prepareSecrets({ ...noKey, dataDir: emptyDir }, plain, {
          warn: (_o: object, m?: string) => void warned.push(m ?? ''),
        });
        assert.equal(r, null);
        assert.deepEqual(warned, [
          'SIGNET_SECRET_KEY is not set: webhook secrets and PKI private keys are stored in plain text',
        ]);
      } finally {
        await plain.close();
        fs.rmSync(emptyDir, { recursive: true, force: true });
      }
    });
  });
}
