// Secrets at rest on both databases, through the real start-up step, the real dispatcher and a real receiver: hook
// secrets and the PKI's private keys are nowhere in a dump of the database or in DATA_DIR's bytes (plain ones from
// before are brought under the key at start); deliveries verify with the secret shown at creation, before and after
// `signet secrets rotate`, and a seal made after the rotation verifies; a key that cannot open what is stored, or
// none on PostgreSQL over encrypted values, stops start with one line.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { openDb } from '../db/db.js';
import { decryptSecret, keyIdOf } from '../lib/secret-box.js';
import { runBackup } from '../backup/backup.js';
import { runRestore } from '../backup/restore.js';
import { pemToDer } from '../pki/cms.js';
import { existingGenerations, KEY_FILES, readKeyFile } from '../pki/key-files.js';
import { loadOrCreatePki } from '../pki/pki.js';
import { checkCms } from '../pki/verify-cms.js';
import { sealPdf } from '../documents/pdf/seal.work.js';
import { extractSignature, makeTextPdf } from '../documents/pdf/testing/seal-fixtures.js';
import { createRuntime } from '../runtime.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { dataDirBytes, oneErrorLine, oneJson, verifySignature } from '../cli/testing/cli.js';
import { plainPdf, signers } from '../signing/testing/requests.js';
import { runSignet } from '../testing/child-server.js';
import { createDispatcher } from '../webhooks/dispatcher.js';
import { createHook } from '../webhooks/hooks.repo.js';
import { databaseBytes } from './testing/dump.js';
import { configuredKeyring, KEY_FILE, prepareSecrets, resolveKeys } from './keyring.js';
import { rotateSecrets } from './rotate.js';

type Receiver = {
  url(path: string): string;
  /** Each request with the path it came to: a hook's own path says which hook sent it. */
  received: { path: string; signature: string; body: string }[];
  close(): Promise<void>;
};

async function startReceiver(): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const signature = String(req.headers['x-service-signature']);
      received.push({ path: req.url ?? '', signature, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

for (const d of await bothDatabases()) {
  describe(`secrets at rest (${d.name})`, { skip: d.skip }, () => {
    const pg = d.database !== 'sqlite';
    // PostgreSQL takes the key from SIGNET_SECRET_KEY; SQLite generates DATA_DIR/secret.key.
    const env: Record<string, string> = pg ? { SIGNET_SECRET_KEY: randomBytes(32).toString('base64') } : {};
    let h: Harness;
    let rx: Receiver;
    let token: string;
    let workspaceId: string;
    /** Each hook by its receiver path: its id and the secret shown at its creation. */
    const hooks = new Map<string, { id: string; secret: string }>();
    before(async () => {
      h = await startHarness({ database: d.database, secretsAtRest: true, env, start: Date.now() });
      rx = await startReceiver();
      const t = await h.tenant('business');
      [token, workspaceId] = [t.token, t.workspaceId];
    });
    after(async () => {
      await rx?.close();
      await h?.close();
    });
    const dataDir = () => h.config.dataDir;

    /**
     * A test event to every hook, sent by a dispatcher with `config`'s keyring: every request the receiver gets
     * verifies with the secret shown when its hook was created, and every hook got one.
     */
    async function deliverAndVerify(config = h.config) {
      const from = rx.received.length;
      for (const { id } of hooks.values()) {
        const sent = await h.request('POST', `/v1/hooks/${id}/test`, { token });
        assert.equal(sent.status, 202, sent.text);
      }
      const keyring = await configuredKeyring(config);
      const dispatcher = createDispatcher({
        db: h.db,
        clock: h.clock,
        workerId: 't',
        allowPrivateNetwork: true,
        keyring,
      });
      while ((await dispatcher.runOnce()) > 0);
      await dispatcher.stop();
      const got = rx.received.slice(from);
      assert.deepEqual(new Set(got.map((r) => r.path)), new Set(hooks.keys()), 'every hook got a delivery');
      for (const r of got) verifySignature(r.signature, hooks.get(r.path)!.secret, r.body);
    }

    /** What must be nowhere at rest: every hook secret, every PKI private key (PEM body and DER). */
    async function assertNothingInClear(config = h.config) {
      const keyring = await configuredKeyring(config);
      const needles: [string, Buffer][] = [...hooks.values()].map((x) => [`secret of ${x.id}`, Buffer.from(x.secret)]);
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
      // Nor is the master key in the database (on SQLite it is DATA_DIR/secret.key, by design).
      const master = (await resolveKeys(config))!.primary;
      for (const form of [master, Buffer.from(master.toString('base64')), Buffer.from(master.toString('hex'))]) {
        assert.equal(db.indexOf(form), -1, 'the master key is in the database');
      }
    }

    test('hook secrets and PKI keys are encrypted at rest, plain ones from before brought under the key at start', async () => {
      if (!pg) assert.equal(fs.statSync(path.join(dataDir(), KEY_FILE)).mode & 0o777, 0o600);
      // From before encryption: a plain hook row and a plain PKI.
      const old = await createHook(
        h.db.kysely,
        { workspaceId, targetUrl: rx.url('/old'), events: [], source: 'api' },
        1,
      );
      hooks.set('/old', old);
      await loadOrCreatePki({ dataDir: dataDir(), clock: h.clock });
      assert.match(fs.readFileSync(path.join(dataDir(), 'pki', 'seal.key'), 'utf8'), /BEGIN PRIVATE KEY/);
      const created = await h.request('POST', '/v1/hooks', { token, body: { target_url: rx.url('/api') } });
      assert.equal(created.status, 201, created.text);
      assert.match(created.json.secret, /^whsec_/);
      hooks.set('/api', created.json);
      // A document's callback hook: its secret is shown once, in the signing request's answer.
      const doc = await h.request('POST', '/v1/signing-requests', {
        token,
        body: {
          signers: signers(1),
          file: { name: 'a.pdf', content_base64: await plainPdf(1) },
          placement: 'auto_append',
          callback_url: rx.url('/callback'),
        },
      });
      assert.equal(doc.status, 201, doc.text);
      hooks.set('/callback', { id: doc.json.callback.hook_id, secret: doc.json.callback.secret });

      // Created encrypted: through the API and as a document's callback.
      const storedNow = async (path: string) =>
        (
          await h.db.kysely
            .selectFrom('hooks')
            .select('secret')
            .where('id', '=', hooks.get(path)!.id)
            .executeTakeFirst()
        )?.secret;
      for (const p of ['/api', '/callback']) assert.match((await storedNow(p)) ?? '', /^enc:v1:/, p);
      assert.equal(await storedNow('/old'), old.secret);
      // A start brings the plain ones under the key.
      await prepareSecrets(h.config, h.db);
      const stored = await h.db.kysely.selectFrom('hooks').select(['id', 'secret']).execute();
      for (const r of stored) assert.match(r.secret, /^enc:v1:[0-9a-f]{8}:/, r.id);
      assert.match(fs.readFileSync(path.join(dataDir(), 'pki', 'seal.key'), 'utf8'), /^enc:v1:/);
      assert.equal(fs.statSync(path.join(dataDir(), 'pki', 'seal.key')).mode & 0o777, 0o600);
      await assertNothingInClear();
      await deliverAndVerify();
    });

    test('a backup holds the generated key: the restored DATA_DIR starts and its secrets open', async (t) => {
      if (pg) return t.skip('with SIGNET_SECRET_KEY the key is kept with the configuration, not in DATA_DIR');
      const to = path.join(os.tmpdir(), `signet-secrets-${randomBytes(4).toString('hex')}.tar.gz`);
      const restoredDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-secrets-restored-'));
      try {
        const summary = await runBackup({ dataDir: dataDir(), databaseUrl: h.config.databaseUrl, to, clock: h.clock });
        assert.ok(!summary.skipped.includes(KEY_FILE), JSON.stringify(summary.skipped));
        const databaseUrl = `sqlite:${path.join(restoredDir, 'signet.db')}`;
        await runRestore({ archive: to, dataDir: restoredDir, databaseUrl });
        const keyFile = path.join(restoredDir, KEY_FILE);
        assert.equal(fs.readFileSync(keyFile, 'utf8'), fs.readFileSync(path.join(dataDir(), KEY_FILE), 'utf8'));
        assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
        const config = loadConfig({ DATA_DIR: restoredDir });
        const db = await openDb(databaseUrl);
        try {
          const ring = await prepareSecrets(config, db);
          for (const x of hooks.values()) {
            const row = await db.kysely
              .selectFrom('hooks')
              .select('secret')
              .where('id', '=', x.id)
              .executeTakeFirstOrThrow();
            assert.equal(decryptSecret(ring, 'hook-secret', x.id, row.secret), x.secret);
          }
          await loadOrCreatePki({ dataDir: restoredDir, clock: h.clock, keyring: ring });
        } finally {
          await db.close();
        }
      } finally {
        fs.rmSync(to, { force: true });
        fs.rmSync(restoredDir, { recursive: true, force: true });
      }
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
          hooks: hooks.size,
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
        assert.deepEqual([r.hooks, r.key_files, r.key_file], [hooks.size, 3, path.join(dataDir(), KEY_FILE)]);
        assert.notEqual(fs.readFileSync(path.join(dataDir(), KEY_FILE), 'utf8'), saved);
        assert.ok(!fs.existsSync(path.join(dataDir(), `${KEY_FILE}.new`)), 'the rotation finished');
        assert.equal(fs.statSync(path.join(dataDir(), KEY_FILE)).mode & 0o777, 0o600);
        // The old key, given as SIGNET_SECRET_KEY, no longer opens anything.
        oldConfig = loadConfig({ DATA_DIR: dataDir(), SIGNET_SECRET_KEY: saved.trim() });
      }
      assert.equal((await configuredKeyring(newConfig))!.primary.id === oldId, false);
      await assertNothingInClear(newConfig);
      await deliverAndVerify(newConfig);

      // A process still running with the old key sends nothing: the attempt fails, to be retried after its restart.
      const api = hooks.get('/api')!;
      assert.equal((await h.request('POST', `/v1/hooks/${api.id}/test`, { token })).status, 202);
      const stale = createDispatcher({
        db: h.db,
        clock: h.clock,
        workerId: 'stale',
        allowPrivateNetwork: true,
        keyring: await configuredKeyring(oldConfig),
      });
      const sentBefore = rx.received.length;
      assert.equal(await stale.runOnce(), 1);
      await stale.stop();
      assert.equal(rx.received.length, sentBefore, 'nothing sent under a secret it cannot open');
      const failed = await h.db.kysely
        .selectFrom('deliveries')
        .select(['status', 'last_error'])
        .where('hook_id', '=', api.id)
        .where('status', '=', 'retrying')
        .executeTakeFirstOrThrow();
      assert.match(failed.last_error ?? '', /^hook secret: it is encrypted under key id [0-9a-f]{8}, which is not/);

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
      if (!pg) {
        // `signet verify` reads the local CAs (their CRL keys encrypted) with the key in DATA_DIR.
        const file = path.join(dataDir(), 'sealed.pdf');
        fs.writeFileSync(file, pdf);
        const r = await runSignet(dataDir(), ['verify', file, '--json']);
        assert.equal(r.stderr, '', 'signet verify reads the encrypted PKI');
        assert.equal(JSON.parse(r.stdout).signatures[0].intact, true, r.stdout);
        fs.rmSync(file);
      }

      await assert.rejects(
        createRuntime(oldConfig, { api: true, worker: true, db: h.db, clock: h.clock, logger: false }),
        (e: Error) =>
          /^SIGNET_SECRET_KEY \(key id [0-9a-f]{8}\) cannot open the secret of hook hook_\w+: it is encrypted under key id [0-9a-f]{8}, which is not the configured key$/.test(
            e.message,
          ),
      );
    });

    test('a wrong key stops `signet serve` with one line; no key on PostgreSQL: refused over encrypted values, plain with a warning otherwise', async () => {
      const stored = await h.db.kysely.selectFrom('hooks').select('secret').executeTakeFirstOrThrow();
      assert.match(stored.secret, /^enc:v1:/, 'there is something to open (else `serve` would start)');
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
