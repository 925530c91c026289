import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ManualClock } from '../lib/clock.js';
import { loadOrCreatePki } from './pki.js';
import { LOCAL_TSA_POLICY } from './local-tsa.js';
import { run, tempDir } from './testing/tools.js';

test('local TSA: tokens and query responses verify with openssl ts', async (t) => {
  const tmp = await tempDir();
  t.after(tmp.cleanup);
  const f = (n: string) => join(tmp.path, n);
  // Real time, so openssl's certificate validity checks (current time) agree; ms set to check they are dropped.
  const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000 + 120);
  const pki = await loadOrCreatePki({ dataDir: tmp.path, clock });
  await writeFile(f('ca.pem'), pki.caCertPem);
  await writeFile(f('data.bin'), 'the signature value');
  const digest = createHash('sha256').update('the signature value').digest();

  const token = await pki.localTsa.timestamp(digest);
  assert.equal(pki.localTsa.provider, 'local');
  // Whole seconds, so a CRL issued after the token (UTCTime, seconds) is never dated before it.
  assert.equal(token.signedAt, new Date(clock.now() - 120).toISOString());
  await writeFile(f('token.der'), token.tokenDer);
  const verified = await run('openssl', [
    'ts',
    '-verify',
    '-in',
    f('token.der'),
    '-token_in',
    '-digest',
    digest.toString('hex'),
    '-CAfile',
    f('ca.pem'),
  ]);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  assert.match(verified.stdout, /Verification: OK/);
  const text = (await run('openssl', ['ts', '-reply', '-in', f('token.der'), '-token_in', '-token_out', '-text']))
    .stdout;
  assert.match(text, new RegExp(`Policy OID: ${LOCAL_TSA_POLICY.replace(/\./g, '\\.')}`));
  assert.match(text, /Time stamp: .* \d\d:\d\d:\d\d \d{4} GMT/, 'genTime in whole seconds');
  assert.match(text, /Accuracy: 0x01 seconds/);
  const wrong = await run('openssl', [
    'ts',
    '-verify',
    '-in',
    f('token.der'),
    '-token_in',
    '-digest',
    '00'.repeat(32),
    '-CAfile',
    f('ca.pem'),
  ]);
  assert.notEqual(wrong.code, 0);

  // RFC 5816: the token's signed attributes name the TSA certificate by signing-certificate-v2.
  const cms = (await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', f('token.der')])).stdout;
  assert.match(cms, /id-smime-aa-signingCertificateV2/);

  // Over the query interface, with a nonce and certReq, checked by openssl against its own query file.
  const q = await run('openssl', ['ts', '-query', '-data', f('data.bin'), '-sha256', '-cert', '-out', f('req.tsq')]);
  assert.equal(q.code, 0, q.stderr);
  await writeFile(f('resp.tsr'), await pki.localTsa.handleTimestampQuery(await readFile(f('req.tsq'))));
  const reply = await run('openssl', [
    'ts',
    '-verify',
    '-in',
    f('resp.tsr'),
    '-queryfile',
    f('req.tsq'),
    '-CAfile',
    f('ca.pem'),
  ]);
  assert.equal(reply.code, 0, reply.stdout + reply.stderr);
  const replyText = (await run('openssl', ['ts', '-reply', '-in', f('resp.tsr'), '-text'])).stdout;
  assert.match(replyText, /Status: Granted\./);
  assert.match(replyText, /Nonce: 0x[0-9A-F]+/);
  const serials = new Set<string>();
  for (let i = 0; i < 3; i++) {
    await writeFile(f('r.tsr'), await pki.localTsa.handleTimestampQuery(await readFile(f('req.tsq'))));
    serials.add(
      /Serial number: (\S+)/.exec((await run('openssl', ['ts', '-reply', '-in', f('r.tsr'), '-text'])).stdout)![1],
    );
  }
  assert.equal(serials.size, 3, 'every token has its own serial number');

  // Garbage and SHA-1 queries are rejected with a status, not a crash.
  await writeFile(f('bad.tsr'), await pki.localTsa.handleTimestampQuery(new Uint8Array([1, 2, 3])));
  assert.match(
    (await run('openssl', ['ts', '-reply', '-in', f('bad.tsr'), '-text'])).stdout,
    /Status: Rejected\.[\s\S]*Failure info: the data submitted has the wrong format/,
  );
  await run('openssl', ['ts', '-query', '-data', f('data.bin'), '-sha1', '-out', f('sha1.tsq')]);
  await writeFile(f('sha1.tsr'), await pki.localTsa.handleTimestampQuery(await readFile(f('sha1.tsq'))));
  assert.match(
    (await run('openssl', ['ts', '-reply', '-in', f('sha1.tsr'), '-text'])).stdout,
    /Failure info:\s+unrecognized or unsupported algorithm identifier/,
  );
});
