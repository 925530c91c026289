// HTTPS served by the process: what a handshake may negotiate (checked with the system's openssl s_client), the
// certificate reloaded on SIGHUP for new connections while an open one finishes, and the one-line refusals.
// Certificates are made with openssl in a temp dir; servers listen on 127.0.0.1 and are stopped by their handles.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { Server } from 'node:https';
import { ConfigError, loadConfig } from '../config.js';
import { MAX_HEADER_BYTES } from '../limits.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { runSignet, startServer, type ChildServer } from '../testing/child-server.js';
import { HSTS, createTlsReloader, loadTls, plainHttpExposure } from './tls.js';

const opensslMissing = spawnSync('openssl', ['version']).status !== 0 ? 'openssl is not installed' : false;

/** A self-signed P-256 certificate for `cn`, as files in `dir`. */
function makeCert(dir: string, cn: string): { cert: string; key: string } {
  const cert = path.join(dir, `${cn}.crt`);
  const key = path.join(dir, `${cn}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${cn}`,
  ], { stdio: 'ignore' }); // prettier-ignore
  return { cert, key };
}

/** One handshake by openssl s_client; OpenSSL's own floor is lowered so that a refusal seen is the server's. */
function handshake(port: number, args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    const c = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.once('close', (code) => resolve({ ok: code === 0 && /Cipher is (?!\(NONE\))/.test(out), out }));
  });
}
const LOW = ['-cipher', 'DEFAULT:@SECLEVEL=0'];

/** An open TLS connection: whose certificate it got, and a way to send bytes and read the one answer. */
async function connect(port: number) {
  const socket = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  let data = '';
  socket.on('data', (d: Buffer) => (data += d.toString()));
  return {
    cn: String(socket.getPeerCertificate().subject.CN),
    write: (s: string) => socket.write(s),
    async answer(): Promise<string> {
      while (!/\r\n\r\n[\s\S]*\}/.test(data) && !socket.readableEnded && !socket.destroyed)
        await new Promise((r) => socket.once('data', r).once('end', r).once('close', r));
      return data;
    },
    close: () => socket.destroy(),
  };
}

/** GET /healthz with its head cut short: the connection holds an unfinished request until `finish`. */
const HEAD = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n';
const FINISH = 'Connection: close\r\n\r\n';

let dir: string;
let a: { cert: string; key: string };
let b: { cert: string; key: string };
/** The files the server is configured with; a reload copies another certificate over them. */
let served: { certFile: string; keyFile: string };
const serve = (c: { cert: string; key: string }) => {
  fs.copyFileSync(c.cert, served.certFile);
  fs.copyFileSync(c.key, served.keyFile);
};

before(() => {
  if (opensslMissing) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-tls-'));
  a = makeCert(dir, 'a.test');
  b = makeCert(dir, 'b.test');
  served = { certFile: path.join(dir, 'server.crt'), keyFile: path.join(dir, 'server.key') };
});
after(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('TLS in process', { skip: opensslMissing }, () => {
  let h: Harness;
  before(async () => {
    serve(a);
    h = await startHarness({
      env: { TLS_CERT_FILE: served.certFile, TLS_KEY_FILE: served.keyFile, BASE_URL: 'https://sign.example' },
    });
  });
  after(() => h?.close());

  test('a reload serves new connections the new certificate while an open connection finishes its request', async () => {
    // The process limits reach the HTTPS server as they reach an HTTP one.
    const server = h.app.server as Server & { maxHeaderSize: number };
    assert.equal(server.headersTimeout, h.config.limits.headersTimeoutMs);
    assert.equal(server.requestTimeout, h.config.limits.headersTimeoutMs + h.config.limits.uploadTimeoutMs);
    assert.equal(server.maxHeaderSize, MAX_HEADER_BYTES);

    const old = await connect(h.port);
    assert.equal(old.cn, 'a.test');
    old.write(HEAD);

    serve(b);
    const reload = createTlsReloader(h.app.server as Server, h.config.tls!);
    assert.equal((await reload()).subject, 'CN=b.test');

    const fresh = await connect(h.port);
    assert.equal(fresh.cn, 'b.test');
    fresh.write(HEAD + FINISH);
    assert.match(await fresh.answer(), /^HTTP\/1\.1 200 [\s\S]*strict-transport-security: max-age=15552000\r\n/i);
    fresh.close();

    old.write(FINISH);
    assert.match(await old.answer(), /^HTTP\/1\.1 200 [\s\S]*\{"ok":true\}$/);
    old.close();

    // A reload that fails (the key no longer matches) throws and changes nothing.
    fs.copyFileSync(a.key, served.keyFile);
    await assert.rejects(
      reload(),
      (e) => e instanceof ConfigError && /^TLS_KEY_FILE .* is not the key/.test(e.message),
    );
    const after = await connect(h.port);
    assert.equal(after.cn, 'b.test');
    after.close();
  });
});

describe('TLS files and the plain-HTTP warning', { skip: opensslMissing }, () => {
  test('unreadable, non-PEM and mismatched files: one line naming the variable', async () => {
    const garbage = path.join(dir, 'garbage.pem');
    fs.writeFileSync(garbage, 'not a pem\n');
    for (const [files, re] of [
      [
        { certFile: path.join(dir, 'missing.crt'), keyFile: a.key },
        /^TLS_CERT_FILE \(.*missing\.crt\) cannot be read: ENOENT$/,
      ],
      [{ certFile: a.cert, keyFile: dir }, /^TLS_KEY_FILE \(.*\) cannot be read: EISDIR$/],
      [{ certFile: garbage, keyFile: a.key }, /^TLS_CERT_FILE \(.*garbage\.pem\) holds no PEM certificate$/],
      [
        { certFile: a.cert, keyFile: garbage },
        /^TLS_KEY_FILE \(.*garbage\.pem\) holds no unencrypted PEM private key$/,
      ],
      [
        { certFile: a.cert, keyFile: b.key },
        /^TLS_KEY_FILE \(.*b\.test\.key\) is not the key of the certificate in TLS_CERT_FILE \(.*a\.test\.crt\)$/,
      ],
    ] as const) {
      // prettier-ignore
      await assert.rejects(loadTls(files), (e) => e instanceof ConfigError && re.test(e.message));
    }
    assert.equal((await loadTls({ certFile: a.cert, keyFile: a.key })).subject, 'CN=a.test');
  });

  test('a non-loopback HOST over plain HTTP with nothing in front is warned about, and only then', () => {
    const warn = (env: Record<string, string>) => plainHttpExposure(loadConfig(env));
    assert.match(String(warn({})), /^HOST :: takes plain HTTP .*API keys, dashboard passwords and signer links/);
    assert.match(String(warn({ HOST: '0.0.0.0', BASE_URL: 'http://sign.example' })), /^HOST 0\.0\.0\.0 /);
    assert.match(String(warn({ HOST: '10.1.2.3' })), /^HOST 10\.1\.2\.3 /);
    for (const env of [
      { HOST: '127.0.0.1' },
      { HOST: '127.8.0.1' },
      { HOST: '::1' },
      { HOST: '::ffff:127.0.0.1' },
      { HOST: 'localhost' },
      { HOST: '0.0.0.0', BASE_URL: 'https://sign.example' },
      { HOST: '0.0.0.0', TRUST_PROXY: '10.0.0.10' },
      { HOST: '0.0.0.0', TLS_CERT_FILE: a.cert, TLS_KEY_FILE: a.key },
    ] as Record<string, string>[]) {
      assert.equal(warn(env), null, JSON.stringify(env));
    }
  });

  test('HSTS only when BASE_URL is https', async () => {
    const h = await startHarness({ env: { BASE_URL: 'http://localhost' } });
    try {
      const r = await h.request('GET', '/healthz');
      assert.equal(r.status, 200);
      assert.equal(r.headers['strict-transport-security'], undefined);
    } finally {
      await h.close();
    }
    assert.equal(HSTS, 'max-age=15552000');
  });
});

describe('signet serve over TLS', { skip: opensslMissing, timeout: 60_000 }, () => {
  let server: ChildServer | undefined;
  after(() => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  });

  test('TLS 1.2 and 1.3 only, modern suites only; SIGHUP reloads for new connections, an open one finishes', async () => {
    serve(a);
    const data = fs.mkdtempSync(path.join(dir, 'data-'));
    server = await startServer(data, {
      args: ['--no-worker'],
      env: { TLS_CERT_FILE: served.certFile, TLS_KEY_FILE: served.keyFile, BASE_URL: 'https://sign.example' },
    });
    const { port, child } = server;
    assert.match(server.log(), /"tls":true/);

    const [v10, v11, v12, v13, weak] = await Promise.all([
      handshake(port, ['-tls1', ...LOW]),
      handshake(port, ['-tls1_1', ...LOW]),
      handshake(port, ['-tls1_2']),
      handshake(port, ['-tls1_3']),
      // RSA key exchange and CBC: offered alone, refused.
      handshake(port, ['-tls1_2', '-cipher', 'AES128-SHA:AES256-SHA256:@SECLEVEL=0']),
    ]);
    assert.equal(v10.ok, false, v10.out);
    assert.equal(v11.ok, false, v11.out);
    assert.match(v12.out, /Cipher is ECDHE-ECDSA-AES128-GCM-SHA256/);
    assert.ok(v12.ok && /subject=CN ?= ?a\.test/.test(v12.out), v12.out);
    assert.ok(v13.ok && /New, TLSv1\.3/.test(v13.out), v13.out);
    assert.equal(weak.ok, false, weak.out);

    const waitLog = async (msg: string) => {
      while (!server!.log().includes(msg)) {
        const exited = await Promise.race([
          new Promise((r) => child.stdout!.once('data', () => r(false))),
          server!.exited.then(() => true),
        ]);
        if (exited) throw new Error(`signet serve exited: ${server!.log()}`);
      }
    };
    const old = await connect(port);
    assert.equal(old.cn, 'a.test');
    old.write(HEAD);
    serve(b);
    child.kill('SIGHUP');
    await waitLog('"msg":"tls certificate reloaded"');
    const fresh = await connect(port);
    assert.equal(fresh.cn, 'b.test');
    fresh.close();
    old.write(FINISH);
    assert.match(await old.answer(), /^HTTP\/1\.1 200 [\s\S]*strict-transport-security: max-age=15552000\r\n/i);
    old.close();
    // The policy holds after the reload too.
    assert.equal((await handshake(port, ['-tls1_1', ...LOW])).ok, false);

    // A reload that fails keeps the certificate in use.
    fs.writeFileSync(served.keyFile, 'not a key\n');
    child.kill('SIGHUP');
    await waitLog('"msg":"tls certificate not reloaded; the previous one stays in use"');
    assert.match(server.log(), /"reason":"TLS_KEY_FILE \(.*\) holds no unencrypted PEM private key"/);
    const still = await connect(port);
    assert.equal(still.cn, 'b.test');
    still.close();

    child.kill('SIGTERM');
    assert.equal((await server.exited).code, 0);
  });

  test('a key that is not the certificate’s: one line, no start, no database', async () => {
    const data = fs.mkdtempSync(path.join(dir, 'data-'));
    // One variable alone is the configuration check's (config.test.ts); both go to stderr the same way.
    const mismatch = await runSignet(data, ['serve'], { TLS_CERT_FILE: a.cert, TLS_KEY_FILE: b.key });
    assert.equal(mismatch.code, 1);
    assert.match(
      mismatch.stderr,
      /^signet: TLS_KEY_FILE \(.*b\.test\.key\) is not the key of the certificate in TLS_CERT_FILE \(.*a\.test\.crt\)\n$/,
    );
    assert.equal(fs.existsSync(path.join(data, 'signet.db')), false, 'refused before the database was opened');
  });
});
