import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { ManualClock } from '../lib/clock.js';
import { checkChain, type ChainOptions } from './chain.js';
import { ab, importSigningKey, pemToDer } from './cms.js';
import { loadOrCreatePki, type Pki } from './pki.js';
import { createOpensslCa, type Issued, type OpensslCa } from './testing/openssl-ca.js';
import { tempDir } from './testing/tools.js';

const DAY = 86_400_000;
const clock = new ManualClock(Date.UTC(2030, 0, 15, 12, 0, 0));
let tmp: Awaited<ReturnType<typeof tempDir>>;
let pki: Pki;
let caKey: CryptoKey;
let foreign: OpensslCa;
let alice: Issued;
let bob: Issued;
let old: Issued;
let tsa: Issued;

before(async () => {
  tmp = await tempDir('signet-chain-');
  pki = await loadOrCreatePki({ dataDir: join(tmp.path, 'data'), clock });
  caKey = await importSigningKey(pemToDer(await readFile(join(tmp.path, 'data', 'pki', 'ca.key'), 'utf8')));
  foreign = await createOpensslCa(join(tmp.path, 'foreign'), 'p256');
  alice = await foreign.issue('Alice');
  bob = await foreign.issue('Bob', { key: 'rsa' });
  old = await foreign.issue('Old Timer', { start: '20200101000000Z', end: '20210101000000Z' });
  tsa = await foreign.issue('Foreign TSA', { extensions: 'tsa' });
});

after(() => tmp.cleanup());

const ca = () => pemToDer(pki.caCertPem);
const codes = (r: { problems: { code: string }[] }) => r.problems.map((p) => p.code).sort();
const now = () => new Date();
const foreignOpts = (o: Partial<ChainOptions> = {}): ChainOptions => ({
  at: now(),
  candidatesDer: [],
  crlsDer: [],
  anchorsDer: [foreign.certDer],
  purpose: 'signature',
  ...o,
});
const ownOpts = (o: Partial<ChainOptions> = {}): ChainOptions => ({
  at: new Date(clock.now()),
  candidatesDer: [],
  crlsDer: [],
  anchorsDer: [ca()],
  purpose: 'signature',
  ...o,
});

/** A CRL by Signet's own CA (or `key`), dated as asked. */
async function ownCrl(o: {
  thisUpdate: number;
  nextUpdate: number;
  revoked?: { serial: string; at: number }[];
  key?: CryptoKey;
}) {
  const crl = await x509.X509CrlGenerator.create({
    issuer: new x509.X509Certificate(ab(ca())).subject,
    thisUpdate: new Date(o.thisUpdate),
    nextUpdate: new Date(o.nextUpdate),
    // With a reason: @peculiar/x509 1.14 writes an empty (invalid) crlEntryExtensions without one, which pkijs refuses.
    entries: (o.revoked ?? []).map((r) => ({
      serialNumber: r.serial,
      revocationDate: new Date(r.at),
      reason: x509.X509CrlReason.keyCompromise,
    })),
    signingKey: o.key ?? caKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return new Uint8Array(crl.rawData);
}

test('openssl CA: a revoked certificate in its CRL is cert_revoked and untrusted; the others are good', async () => {
  const before = await checkChain(alice.certDer, foreignOpts());
  assert.equal(before.trusted, true);
  assert.equal(before.revocation, 'unknown');
  assert.deepEqual(codes(before), ['revocation_unknown']);
  assert.equal(before.chainDer.length, 2);

  await foreign.revoke(alice);
  const crl = await foreign.crl();
  const at = new Date(Date.now() + 2000);
  const r = await checkChain(alice.certDer, foreignOpts({ at, crlsDer: [crl] }));
  assert.equal(r.trusted, false);
  assert.equal(r.revocation, 'revoked');
  assert.deepEqual(codes(r), ['cert_revoked']);
  assert.equal(r.problems[0].vars?.subject, 'CN=Alice, O=Elsewhere Ltd');
  assert.ok(Math.abs(Date.parse(r.problems[0].vars!.revoked_at) - Date.now()) < 60_000, 'revoked_at is about now');

  const good = await checkChain(bob.certDer, foreignOpts({ at, crlsDer: [crl] }));
  assert.deepEqual([good.trusted, good.revocation, codes(good)], [true, 'good', []]);
  // Our CA's CRL says nothing about the foreign CA's certificates.
  const ours = await ownCrl({ thisUpdate: Date.now(), nextUpdate: Date.now() + DAY });
  const other = await checkChain(bob.certDer, foreignOpts({ at, crlsDer: [ours] }));
  assert.deepEqual([other.trusted, other.revocation, codes(other)], [true, 'unknown', ['revocation_unknown']]);
});

test('validity at `at`: cert_expired after notAfter, cert_not_yet_valid before notBefore', async () => {
  const expired = await checkChain(old.certDer, foreignOpts());
  assert.equal(expired.trusted, false);
  assert.deepEqual(
    expired.problems.find((p) => p.code === 'cert_expired'),
    { code: 'cert_expired', vars: { subject: 'CN=Old Timer, O=Elsewhere Ltd', not_after: '2021-01-01T00:00:00.000Z' } },
  );
  const early = await checkChain(old.certDer, foreignOpts({ at: new Date(Date.UTC(2019, 5, 1)) }));
  assert.equal(early.trusted, false);
  assert.ok(codes(early).includes('cert_not_yet_valid'), 'not yet valid');
  // The CA itself was made today, so at a time inside the leaf's own window the CA is not yet valid either.
  const inside = await checkChain(old.certDer, foreignOpts({ at: new Date(Date.UTC(2020, 5, 1)) }));
  assert.deepEqual(
    inside.problems.filter((p) => p.code === 'cert_not_yet_valid').map((p) => p.vars?.subject),
    ['CN=Foreign Test CA, O=Elsewhere Ltd'],
  );
  // Signet's own certificates ten years and a day on.
  const later = await checkChain(pki.seal.certDer, ownOpts({ at: new Date(clock.now() + 3654 * DAY) }));
  assert.equal(later.trusted, false);
  assert.ok(codes(later).includes('cert_expired'), 'expired');
});

test('purpose: a TSA certificate cannot sign documents and a signing certificate cannot stamp time', async () => {
  const tsaAsTsa = await checkChain(tsa.certDer, foreignOpts({ purpose: 'timestamp' }));
  assert.equal(tsaAsTsa.trusted, true);
  const tsaAsSigner = await checkChain(tsa.certDer, foreignOpts());
  assert.deepEqual([tsaAsSigner.trusted, codes(tsaAsSigner)], [false, ['revocation_unknown', 'wrong_key_usage']]);
  const aliceAsTsa = await checkChain(alice.certDer, foreignOpts({ purpose: 'timestamp' }));
  assert.equal(aliceAsTsa.trusted, false);
  assert.ok(codes(aliceAsTsa).includes('wrong_key_usage'), 'wrong key usage');
  assert.equal((await checkChain(pki.localTsa.certDer, ownOpts({ purpose: 'timestamp' }))).trusted, true);
  assert.equal((await checkChain(pki.localTsa.certDer, ownOpts())).trusted, false);
  assert.equal((await checkChain(pki.seal.certDer, ownOpts({ purpose: 'timestamp' }))).trusted, false);
});

test("Signet's CRL: good while current or issued later, unknown when stale or forged, revoked only from its date", async () => {
  const at = clock.now();
  const serial = pki.seal.serialHex;
  const check = async (crl: Uint8Array) => checkChain(pki.seal.certDer, ownOpts({ crlsDer: [crl] }));
  const current = await check(await ownCrl({ thisUpdate: at - DAY, nextUpdate: at + DAY }));
  assert.deepEqual([current.trusted, current.revocation, codes(current)], [true, 'good', []]);
  const issuedAfter = await check(await ownCrl({ thisUpdate: at + 30 * DAY, nextUpdate: at + 37 * DAY }));
  assert.equal(issuedAfter.revocation, 'good');
  const stale = await check(await ownCrl({ thisUpdate: at - 9 * DAY, nextUpdate: at - 2 * DAY }));
  assert.deepEqual([stale.trusted, stale.revocation, codes(stale)], [true, 'unknown', ['revocation_unknown']]);

  const otherKeys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
  ])) as CryptoKeyPair;
  const forged = await check(
    await ownCrl({ thisUpdate: at, nextUpdate: at + DAY, revoked: [{ serial, at }], key: otherKeys.privateKey }),
  );
  assert.deepEqual([forged.trusted, forged.revocation], [true, 'unknown']);

  const revokedBefore = await check(
    await ownCrl({ thisUpdate: at + DAY, nextUpdate: at + 2 * DAY, revoked: [{ serial, at: at - 1000 }] }),
  );
  assert.deepEqual([revokedBefore.trusted, revokedBefore.revocation], [false, 'revoked']);
  assert.deepEqual(revokedBefore.problems[0].vars, {
    subject: new x509.X509Certificate(ab(pki.seal.certDer)).subject,
    revoked_at: new Date(at - 1000).toISOString(),
  });
  const revokedAfter = await check(
    await ownCrl({ thisUpdate: at + DAY, nextUpdate: at + 2 * DAY, revoked: [{ serial, at: at + 1000 }] }),
  );
  assert.deepEqual([revokedAfter.trusted, revokedAfter.revocation], [true, 'good']);
});

test('paths through intermediates: found among candidates, incomplete without, refused when a link is no CA', async () => {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = () => webcrypto.subtle.generateKey(alg, false, ['sign', 'verify']) as Promise<CryptoKeyPair>;
  const validity = { notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + DAY) };
  const [rootK, midK, leafK] = await Promise.all([keys(), keys(), keys()]);
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    ...validity,
    name: 'CN=Root',
    keys: rootK,
    signingAlgorithm: alg,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  const mid = (ca: boolean, pathLen?: number) =>
    x509.X509CertificateGenerator.create({
      ...validity,
      subject: 'CN=Mid',
      issuer: 'CN=Root',
      publicKey: midK.publicKey,
      signingKey: rootK.privateKey,
      signingAlgorithm: alg,
      extensions: [new x509.BasicConstraintsExtension(ca, pathLen, true)],
    });
  const leafOf = async (issuer: string, key: CryptoKey) =>
    new Uint8Array(
      (
        await x509.X509CertificateGenerator.create({
          ...validity,
          subject: 'CN=Leaf',
          issuer,
          publicKey: leafK.publicKey,
          signingKey: key,
          signingAlgorithm: alg,
        })
      ).rawData,
    );
  const leaf = await leafOf('CN=Mid', midK.privateKey);
  const der = (c: x509.X509Certificate) => new Uint8Array(c.rawData);
  const opts = (candidates: Uint8Array[]) => foreignOpts({ anchorsDer: [der(root)], candidatesDer: candidates });

  const full = await checkChain(leaf, opts([der(await mid(true)), der(root)]));
  assert.deepEqual([full.trusted, full.chainDer.length], [true, 3]);
  const missing = await checkChain(leaf, opts([]));
  assert.deepEqual([missing.trusted, missing.chainDer.length, codes(missing)], [false, 1, ['chain_incomplete']]);
  const notCa = await checkChain(leaf, opts([der(await mid(false))]));
  assert.deepEqual([notCa.trusted, codes(notCa).includes('wrong_key_usage')], [false, true]);
  // A leaf claiming Mid as issuer but signed by someone else finds no path.
  const imposter = await checkChain(await leafOf('CN=Mid', rootK.privateKey), opts([der(await mid(true))]));
  assert.deepEqual([imposter.trusted, codes(imposter)], [false, ['chain_incomplete']]);
  // The anchor itself is trusted as given.
  assert.equal((await checkChain(der(root), opts([]))).trusted, true);
});

test('garbage never throws', async () => {
  for (const bad of [new Uint8Array(0), new Uint8Array([0x30, 0x80]), new TextEncoder().encode('nope')]) {
    const r = await checkChain(bad, foreignOpts({ candidatesDer: [bad], crlsDer: [bad], anchorsDer: [bad] }));
    assert.equal(r.trusted, false);
    assert.equal(r.revocation, 'unknown');
  }
  const r = await checkChain(
    alice.certDer,
    foreignOpts({ candidatesDer: [new Uint8Array([1])], crlsDer: [new Uint8Array([2])] }),
  );
  assert.equal(r.trusted, true);
});
