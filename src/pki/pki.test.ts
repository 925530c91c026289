import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ManualClock } from '../lib/clock.js';
import { loadOrCreatePki } from './pki.js';
import { derToPem } from './cms.js';
import { run, tempDir } from './testing/tools.js';

const clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'));

test('first start generates CA, seal and TSA certificates that openssl accepts; later starts reuse them', async (t) => {
  const tmp = await tempDir();
  t.after(tmp.cleanup);
  const pki = await loadOrCreatePki({ dataDir: tmp.path, clock });
  const dir = join(tmp.path, 'pki');

  assert.equal((await stat(dir)).mode & 0o777, 0o700);
  for (const key of ['ca.key', 'seal.key', 'tsa.key'])
    assert.equal((await stat(join(dir, key))).mode & 0o777, 0o600, key);
  assert.equal(await readFile(join(dir, 'ca.crt'), 'utf8'), pki.caCertPem);

  const ca = join(dir, 'ca.crt');
  const caText = await run('openssl', ['x509', '-in', ca, '-noout', '-text']);
  assert.match(caText.stdout, /Subject: CN = Signet Local CA/);
  assert.match(caText.stdout, /Basic Constraints: critical\s+CA:TRUE/);
  assert.match(caText.stdout, /Key Usage: critical\s+Certificate Sign, CRL Sign/);
  assert.match(caText.stdout, /ecdsa-with-SHA256/);
  // Validity comes from the injected clock, not the machine's.
  assert.match(caText.stdout, /Not Before: Mar {2}1 09:50:00 2026 GMT/);
  assert.match(caText.stdout, /Not After : .* 2036 GMT/);

  const seal = await run('openssl', [
    'verify',
    '-attime',
    String(clock.now() / 1000),
    '-CAfile',
    ca,
    join(dir, 'seal.crt'),
  ]);
  assert.equal(seal.code, 0, seal.stderr);
  const sealText = (await run('openssl', ['x509', '-in', join(dir, 'seal.crt'), '-noout', '-text', '-serial'])).stdout;
  assert.match(sealText, /Key Usage: critical\s+Digital Signature, Non Repudiation/);
  assert.match(sealText, /Extended Key Usage: \s*1\.3\.6\.1\.5\.5\.7\.3\.36, E-mail Protection/);
  assert.equal(/serial=([0-9A-F]+)/.exec(sealText)![1].toLowerCase(), pki.seal.serialHex);

  // openssl's timestampsign purpose requires the timeStamping EKU and that it be critical.
  const tsa = await run('openssl', [
    'verify',
    '-attime',
    String(clock.now() / 1000),
    '-purpose',
    'timestampsign',
    '-CAfile',
    ca,
    join(dir, 'tsa.crt'),
  ]);
  assert.equal(tsa.code, 0, tsa.stderr);
  assert.match(
    (await run('openssl', ['x509', '-in', join(dir, 'tsa.crt'), '-noout', '-text'])).stdout,
    /Extended Key Usage: critical\s+Time Stamping/,
  );

  const again = await loadOrCreatePki({ dataDir: tmp.path, clock: new ManualClock(clock.now() + 86_400_000) });
  assert.equal(again.caCertPem, pki.caCertPem);
  assert.equal(again.seal.serialHex, pki.seal.serialHex);
  assert.deepEqual(again.localTsa.certDer, pki.localTsa.certDer);
});

test('concurrent first starts agree on one CA', async (t) => {
  const tmp = await tempDir();
  t.after(tmp.cleanup);
  const all = await Promise.all(Array.from({ length: 4 }, () => loadOrCreatePki({ dataDir: tmp.path, clock })));
  for (const p of all) {
    assert.equal(p.caCertPem, all[0].caCertPem);
    assert.equal(p.seal.serialHex, all[0].seal.serialHex);
  }
  const leftovers = (await run('ls', ['-A', tmp.path])).stdout.trim().split('\n');
  assert.deepEqual(leftovers, ['pki'], 'losers remove their temporary directories');
});

test('an incomplete pki directory is reported, never silently regenerated', async (t) => {
  const tmp = await tempDir();
  t.after(tmp.cleanup);
  await loadOrCreatePki({ dataDir: tmp.path, clock });
  await rm(join(tmp.path, 'pki', 'seal.key'));
  await assert.rejects(loadOrCreatePki({ dataDir: tmp.path, clock }), /incomplete \(missing seal\.key\)/);
  await rm(join(tmp.path, 'pki'), { recursive: true });
  await mkdir(join(tmp.path, 'pki'), { mode: 0o700 });
  await writeFile(join(tmp.path, 'pki', 'stray'), '');
  await assert.rejects(loadOrCreatePki({ dataDir: tmp.path, clock }), /incomplete/);
});

test('a PKCS#12 from openssl pkcs12 -export supplies the seal identity (RSA key, CA chain)', async (t) => {
  const tmp = await tempDir();
  t.after(tmp.cleanup);
  const f = (n: string) => join(tmp.path, n);
  const ok = async (args: string[]) => {
    const r = await run('openssl', args);
    assert.equal(r.code, 0, `openssl ${args[0]}: ${r.stderr}`);
  };
  await ok([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-subj',
    '/CN=Outside CA',
    '-days',
    '30',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  ]);
  await ok([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('seal.key'),
    '-out',
    f('seal.csr'),
    '-subj',
    '/CN=Outside Seal',
  ]);
  await writeFile(f('ext.cnf'), 'keyUsage=critical,digitalSignature,nonRepudiation\n');
  await ok([
    'x509',
    '-req',
    '-in',
    f('seal.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-set_serial',
    '0x00ff1234',
    '-days',
    '30',
    '-extfile',
    f('ext.cnf'),
    '-out',
    f('seal.crt'),
  ]);
  await ok([
    'pkcs12',
    '-export',
    '-inkey',
    f('seal.key'),
    '-in',
    f('seal.crt'),
    '-certfile',
    f('ca.crt'),
    '-passout',
    'pass:s3cret €',
    '-out',
    f('seal.p12'),
  ]);

  const pki = await loadOrCreatePki({ dataDir: tmp.path, clock, sealP12: f('seal.p12'), sealP12Password: 's3cret €' });
  assert.equal(pki.seal.serialHex, 'ff1234');
  assert.equal(
    derToPem(pki.seal.certDer, 'CERTIFICATE'),
    derToPem(pemBody(await readFile(f('seal.crt'), 'utf8')), 'CERTIFICATE'),
  );
  assert.equal(pki.seal.chainDer.length, 1);
  assert.equal(
    derToPem(pki.seal.chainDer[0], 'CERTIFICATE'),
    derToPem(pemBody(await readFile(f('ca.crt'), 'utf8')), 'CERTIFICATE'),
  );
  assert.equal(pki.seal.privateKey.algorithm.name, 'RSASSA-PKCS1-v1_5');
  assert.equal(pki.seal.privateKey.extractable, false);
  // The generated CA and local TSA still exist alongside an imported seal.
  assert.match(pki.caCertPem, /BEGIN CERTIFICATE/);

  await assert.rejects(
    loadOrCreatePki({ dataDir: tmp.path, clock, sealP12: f('seal.p12'), sealP12Password: 'wrong' }),
    /cannot read the seal PKCS#12 file/,
  );
});

function pemBody(pem: string): Uint8Array {
  return new Uint8Array(Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64'));
}
