// Each signature's level in the report: `qes` only for an intact, trusted signature whose certificate is qualified
// for signatures (a test QTSP's, made by openssl); `advanced` for any other signature, Signet's seal included; null
// for a document timestamp. The QTSP's user certificate stands in as the "seal identity" so sealPdf makes the CMS.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ManualClock } from '../../lib/clock.js';
import { importSigningKey, parseCert, pemToDer, serialHexOf } from '../../pki/cms.js';
import { loadOrCreatePki, type Pki } from '../../pki/pki.js';
import { tempDir } from '../../pki/testing/tools.js';
import type { SealIdentity } from '../../pki/types.js';
import { createValidationSource } from '../../pki/validation-data.js';
import { createQesCa, type QesCa, type QesCert } from '../../qes/testing/qes-ca.js';
import { readFile } from 'node:fs/promises';
import { sealPdf } from './seal.work.js';
import { verifyInWorker } from './verify.work.js';
import type { VerifyTrust } from './verify.js';

let dirs: Awaited<ReturnType<typeof tempDir>>[] = [];
let ca: QesCa;
let pki: Pki;
let clock: ManualClock;
let crl: Uint8Array;

before(async () => {
  dirs = [await tempDir(), await tempDir()];
  ca = await createQesCa(dirs[0]!.path, { users: ['anna'], key: 'rsa', crlUrl: 'http://127.0.0.1:9/crl' });
  crl = await ca.crl();
  // openssl dates the certificates by the system clock: the test's time starts after they were issued.
  clock = new ManualClock(Date.now());
  pki = await loadOrCreatePki({ dataDir: dirs[1]!.path, clock });
});
after(async () => {
  for (const d of dirs) await d.cleanup();
});

async function plain(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage().drawText('Qualified clause', { x: 50, y: 700, font });
  return doc.save();
}

async function identityOf(cert: QesCert): Promise<SealIdentity> {
  return {
    certDer: cert.certDer,
    chainDer: [ca.caCert.certDer],
    privateKey: await importSigningKey(pemToDer(await readFile(cert.keyFile, 'utf8'))),
    serialHex: serialHexOf(parseCert(cert.certDer)),
  };
}

const signedBy = async (cert: QesCert) =>
  (await sealPdf(await plain(), { seal: await identityOf(cert), tsa: pki.localTsa, clock })).pdf;

/** The QTSP's CA and Signet's (for the TSA), with the QTSP's CRL so the path's revocation is known. */
const trust = (anchors: 'both' | 'tsa-only' = 'both'): VerifyTrust => ({
  anchorsDer: anchors === 'both' ? [ca.caCert.certDer, pki.caCertDer] : [pki.caCertDer],
  crlsDer: [crl],
  nowMs: clock.now(),
});

test('a qualified certificate, intact and trusted: qes', async () => {
  const r = await verifyInWorker(await signedBy(ca.users.anna!.qualified), trust());
  const [sig] = r.signatures;
  assert.equal(r.signatures.length, 1);
  assert.ok(sig!.intact && sig!.trusted, JSON.stringify(sig));
  assert.equal(sig!.level, 'qes', JSON.stringify(sig));
  assert.match(sig!.signer!.subject, /CN=anna/);
  assert.equal(r.verdict, 'valid', JSON.stringify(r));
});

test('the same signer with a certificate without QC statements: advanced, though trusted', async () => {
  const r = await verifyInWorker(await signedBy(ca.users.anna!.not_qualified), trust());
  assert.ok(r.signatures[0]!.trusted, JSON.stringify(r.signatures[0]));
  assert.equal(r.signatures[0]!.level, 'advanced');
});

test('a qualified certificate that is not trusted, revoked, expired, or a signature that is broken: advanced', async () => {
  const qualified = await signedBy(ca.users.anna!.qualified);
  const untrusted = await verifyInWorker(qualified, trust('tsa-only'));
  assert.equal(untrusted.signatures[0]!.trusted, false);
  assert.equal(untrusted.signatures[0]!.level, 'advanced', 'no anchor for the QTSP: not qualified');

  const broken = Buffer.from(qualified);
  broken[300] ^= 0x04;
  const b = await verifyInWorker(broken, trust());
  assert.equal(b.signatures[0]!.intact, false);
  assert.equal(b.signatures[0]!.level, 'advanced', 'a signature that does not verify is no QES');

  for (const [variant, code] of [
    ['revoked', 'cert_revoked'],
    ['expired', 'cert_expired'],
  ] as const) {
    const r = await verifyInWorker(await signedBy(ca.users.anna![variant]), trust());
    const sig = r.signatures[0]!;
    assert.equal(sig.trusted, false, `${variant}: ${JSON.stringify(sig)}`);
    assert.ok(
      sig.problems.some((p) => p.code === code),
      `${variant}: ${JSON.stringify(sig.problems)}`,
    );
    assert.equal(sig.level, 'advanced', variant);
  }
});

test('Signet’s own seal is advanced and its document timestamp has no level', async () => {
  const sealed = await sealPdf(await plain(), {
    seal: pki.seal,
    tsa: pki.localTsa,
    clock,
    longTerm: { source: createValidationSource({ cas: [pki.ca], clock }), tsaIssuersDer: [pki.caCertDer] },
  });
  const r = await verifyInWorker(sealed.pdf, trust());
  assert.equal(r.verdict, 'valid', JSON.stringify(r));
  assert.deepEqual(
    r.signatures.map((s) => [s.kind, s.level]),
    [
      ['signature', 'advanced'],
      ['document_timestamp', null],
    ],
  );
});
