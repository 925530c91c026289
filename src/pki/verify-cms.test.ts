import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import * as pkijs from 'pkijs';
import { ManualClock } from '../lib/clock.js';
import { sealPdf } from '../documents/pdf/seal.work.js';
import { extractSignature, makeTextPdf } from '../documents/pdf/testing/seal-fixtures.js';
import { checkChain } from './chain.js';
import { ab, bytesEqual, pemToDer } from './cms.js';
import { loadOrCreatePki, type Pki } from './pki.js';
import { checkCms, checkTimestampToken } from './verify-cms.js';
import { createOpensslCa, type Issued, type OpensslCa } from './testing/openssl-ca.js';
import { tempDir } from './testing/tools.js';

const clock = new ManualClock(Date.UTC(2031, 4, 6, 7, 8, 9, 123));
let tmp: Awaited<ReturnType<typeof tempDir>>;
let pki: Pki;
let sealed: Uint8Array;
let foreign: OpensslCa;
let rsa: Issued;
let p384: Issued;

before(async () => {
  tmp = await tempDir('signet-verify-cms-');
  pki = await loadOrCreatePki({ dataDir: join(tmp.path, 'data'), clock });
  ({ pdf: sealed } = await sealPdf(await makeTextPdf(2), { seal: pki.seal, tsa: pki.localTsa, clock }));
  foreign = await createOpensslCa(join(tmp.path, 'foreign'), 'rsa');
  rsa = await foreign.issue('Alice Foreign', { key: 'rsa' });
  p384 = await foreign.issue('Bob Foreign', { key: 'p384' });
});

after(() => tmp.cleanup());

const ca = () => pemToDer(pki.caCertPem);
const codes = (r: { problems: { code: string }[] }) => r.problems.map((p) => p.code).sort();

/** The seal's CMS and its two signed ranges, read from the file the way a verifier does. */
function sealParts(pdf: Uint8Array): { cms: Uint8Array; parts: Uint8Array[] } {
  const {
    byteRange: [a, b, c, d],
    cmsDer,
  } = extractSignature(pdf);
  return { cms: cmsDer, parts: [pdf.subarray(a, a + b), pdf.subarray(c, c + d)] };
}

test('a Signet seal is intact, names the seal certificate, and its timestamp is checked; the chain is trusted', async () => {
  const { cms, parts } = sealParts(sealed);
  const r = await checkCms(cms, parts, 'signature');
  assert.equal(r.intact, true);
  assert.deepEqual(r.problems, []);
  assert.ok(r.signerCertDer && bytesEqual(r.signerCertDer, pki.seal.certDer), 'signer is the seal certificate');
  assert.equal(r.signer?.serial, pki.seal.serialHex);
  assert.match(r.signer!.subject, /^CN=Signet Document Seal, OU=Installation [0-9a-f]{8}, O=Signet$/);
  assert.match(r.signer!.issuer, /^CN=Signet Local CA/);
  assert.deepEqual(r.algorithms, { digest: 'sha256', signature: 'ecdsa-with-SHA256' });
  assert.equal(r.signingTime, null, 'the seal claims its time in /M, not as a signed attribute');
  // The seal carries its certificate and the CA's; the token adds the TSA's.
  assert.equal(r.certsDer.length, 3);
  assert.ok(
    r.certsDer.some((d) => bytesEqual(d, pki.localTsa.certDer)),
    'the TSA certificate is among certsDer',
  );

  const ts = r.timestamp!;
  assert.equal(ts.intact, true);
  assert.equal(
    ts.genTime,
    new Date(Math.floor(clock.now() / 1000) * 1000).toISOString(),
    'the local TSA stamps whole seconds',
  );
  assert.ok(
    ts.signerCertDer && bytesEqual(ts.signerCertDer, pki.localTsa.certDer),
    'token signer is the TSA certificate',
  );
  assert.deepEqual(ts.problems, []);

  const at = new Date(ts.genTime!);
  const seal = await checkChain(r.signerCertDer!, {
    at,
    candidatesDer: r.certsDer,
    crlsDer: [],
    anchorsDer: [ca()],
    purpose: 'signature',
  });
  assert.equal(seal.trusted, true);
  assert.equal(seal.chainDer.length, 2);
  const tsa = await checkChain(ts.signerCertDer!, {
    at,
    candidatesDer: r.certsDer,
    crlsDer: [],
    anchorsDer: [ca()],
    purpose: 'timestamp',
  });
  assert.equal(tsa.trusted, true);
});

test('one flipped byte in either signed range: not intact, digest_mismatch; the timestamp still fits the signature', async () => {
  const { byteRange } = extractSignature(sealed);
  for (const offset of [byteRange[0] + 200, byteRange[2] + 5]) {
    const pdf = new Uint8Array(sealed);
    pdf[offset] ^= 0x01;
    const { cms, parts } = sealParts(pdf);
    const r = await checkCms(cms, parts, 'signature');
    assert.equal(r.intact, false);
    assert.deepEqual(codes(r), ['digest_mismatch']);
    assert.equal(r.timestamp?.intact, true);
  }
});

test('a changed signature value: signature_invalid, and the timestamp no longer covers it', async () => {
  const { cms, parts } = sealParts(sealed);
  const ci = pkijs.ContentInfo.fromBER(ab(cms));
  const value = new pkijs.SignedData({ schema: ci.content }).signerInfos[0].signature.valueBlock.valueHexView;
  const at = Buffer.from(cms).indexOf(value) + value.length - 1;
  assert.ok(at > value.length, 'signature value found in the CMS');
  const bad = new Uint8Array(cms);
  bad[at] ^= 0x01;
  const r = await checkCms(bad, parts, 'signature');
  assert.equal(r.intact, false);
  assert.deepEqual(codes(r), ['signature_invalid', 'timestamp_invalid']);
  assert.deepEqual(codes(r.timestamp!), ['timestamp_imprint_mismatch']);
});

test('a local TSA token as a document timestamp: intact with the right genTime; other bytes: digest_mismatch', async () => {
  const bytes = new TextEncoder().encode('everything up to the document timestamp');
  clock.advance(61_000);
  const { tokenDer, signedAt } = await pki.localTsa.timestamp(createHash('sha256').update(bytes).digest());
  const r = await checkCms(tokenDer, [bytes.subarray(0, 10), bytes.subarray(10)], 'document_timestamp');
  assert.equal(r.intact, true);
  assert.deepEqual(r.problems, []);
  assert.equal(r.timestamp?.genTime, signedAt);
  assert.equal(
    r.timestamp?.genTime,
    new Date(Math.floor(clock.now() / 1000) * 1000).toISOString(),
    'the local TSA stamps whole seconds',
  );
  assert.ok(r.signerCertDer && bytesEqual(r.signerCertDer, pki.localTsa.certDer), 'signer is the TSA certificate');
  assert.deepEqual(r.algorithms, { digest: 'sha256', signature: 'ecdsa-with-SHA256' });

  const other = await checkCms(tokenDer, [new TextEncoder().encode('something else')], 'document_timestamp');
  assert.equal(other.intact, false);
  assert.deepEqual(codes(other), ['digest_mismatch']);
  assert.equal((await checkTimestampToken(tokenDer, [bytes])).intact, true);
  // A token is not a PDF signature: its content is TSTInfo, not the signed bytes.
  assert.equal((await checkCms(tokenDer, [bytes], 'signature')).intact, false);
});

test('openssl signatures by a foreign CA: RSA PKCS#1 v1.5 and PSS, ECDSA P-384; intact but not trusted by us', async () => {
  const data = new TextEncoder().encode('%PDF-1.7 signed by someone else');
  const cases = [
    { who: rsa, opts: {}, alg: { digest: 'sha256', signature: 'rsa-with-SHA256' } },
    { who: rsa, opts: { pss: true }, alg: { digest: 'sha256', signature: 'rsa-pss-with-SHA256' } },
    { who: rsa, opts: { md: 'sha512', noattr: true }, alg: { digest: 'sha512', signature: 'rsa-with-SHA512' } },
    { who: p384, opts: { md: 'sha384' }, alg: { digest: 'sha384', signature: 'ecdsa-with-SHA384' } },
  ];
  for (const { who, opts, alg } of cases) {
    const cms = await foreign.sign(who, data, opts);
    const r = await checkCms(cms, [data], 'signature');
    const label = `${who.name} ${JSON.stringify(opts)}`;
    assert.equal(r.intact, true, label);
    assert.deepEqual(codes(r), ['timestamp_missing'], label);
    assert.deepEqual(r.algorithms, alg, label);
    assert.equal(r.signer?.subject, `CN=${who.name}, O=Elsewhere Ltd`, label);
    if (!('noattr' in opts))
      assert.ok(r.signingTime && Math.abs(Date.parse(r.signingTime) - Date.now()) < 60_000, 'signingTime is about now');

    const changed = await checkCms(cms, [data.subarray(1)], 'signature');
    assert.equal(changed.intact, false, label);

    const ours = await checkChain(r.signerCertDer!, {
      at: new Date(),
      candidatesDer: r.certsDer,
      crlsDer: [],
      anchorsDer: [ca()],
      purpose: 'signature',
    });
    assert.equal(ours.trusted, false, label);
    assert.deepEqual(codes(ours), ['chain_incomplete'], label);
    const theirs = await checkChain(r.signerCertDer!, {
      at: new Date(),
      candidatesDer: r.certsDer,
      crlsDer: [],
      anchorsDer: [foreign.certDer],
      purpose: 'signature',
    });
    assert.equal(theirs.trusted, true, label);
  }
});

test('ECDSA P-521 verifies; an RSA key under 2048 bits is weak', async () => {
  const data = new TextEncoder().encode('curves and sizes');
  const p521 = await foreign.issue('Carol Foreign', { key: 'p521' });
  const big = await checkCms(await foreign.sign(p521, data, { md: 'sha512' }), [data], 'signature');
  assert.deepEqual(
    [big.intact, big.algorithms.signature, codes(big)],
    [true, 'ecdsa-with-SHA512', ['timestamp_missing']],
  );
  const small = await foreign.issue('Dave Foreign', { key: 'rsa1024' });
  const weak = await checkCms(await foreign.sign(small, data), [data], 'signature');
  assert.equal(weak.intact, true);
  assert.deepEqual(
    weak.problems.filter((p) => p.code === 'weak_algorithm'),
    [{ code: 'weak_algorithm', vars: { algorithm: 'RSA-1024' } }],
  );
});

test('SHA-1 still verifies but is weak', async () => {
  const data = new TextEncoder().encode('old habits');
  const r = await checkCms(await foreign.sign(rsa, data, { md: 'sha1' }), [data], 'signature');
  assert.equal(r.intact, true);
  assert.deepEqual(r.algorithms, { digest: 'sha1', signature: 'rsa-with-SHA1' });
  assert.deepEqual(
    r.problems.filter((p) => p.code === 'weak_algorithm'),
    [{ code: 'weak_algorithm', vars: { algorithm: 'SHA1' } }],
  );
});

test('a signature whose certificates were left out: signer_cert_missing, not intact', async () => {
  const data = new TextEncoder().encode('no certificates');
  const r = await checkCms(await foreign.sign(rsa, data, { nocerts: true }), [data], 'signature');
  assert.equal(r.intact, false);
  assert.deepEqual(codes(r), ['signer_cert_missing', 'timestamp_missing']);
  assert.equal(r.signer, null);
});

test('garbage never throws: cms_malformed', async () => {
  const { cms } = sealParts(sealed);
  const inputs = [
    new Uint8Array(0),
    new Uint8Array([0x30]),
    new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]),
    new TextEncoder().encode('%PDF-1.7 not a signature'),
    cms.subarray(0, cms.length - 40),
    Uint8Array.from([...cms, 0x30, 0x00]),
    pki.localTsa.certDer,
    createHash('sha512').update('x').digest(),
  ];
  for (const [i, input] of inputs.entries()) {
    for (const kind of ['signature', 'document_timestamp'] as const) {
      const r = await checkCms(input, [input], kind);
      assert.equal(r.intact, false, `${i} ${kind}`);
      assert.deepEqual(codes(r), ['cms_malformed'], `${i} ${kind}`);
    }
    assert.deepEqual(codes(await checkTimestampToken(input, [input])), ['cms_malformed']);
  }
  // Zero padding after the DER, as in a PDF's /Contents, is fine.
  const { parts } = sealParts(sealed);
  assert.equal((await checkCms(Uint8Array.from([...cms, 0, 0, 0]), parts, 'signature')).intact, true);
});
