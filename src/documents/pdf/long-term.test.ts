import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ManualClock } from '../../lib/clock.js';
import { loadOrCreatePki } from '../../pki/pki.js';
import { tempDir } from '../../pki/testing/tools.js';
import { createValidationSource } from '../../pki/validation-data.js';
import { addArchiveTimestamp } from './long-term.js';
import { sealPdf } from './seal.work.js';
import { assertPadesLta } from './testing/pades.js';
import { pdfScratch } from './testing/tools.js';

async function samplePdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) doc.addPage().drawText(`Page ${i + 1} of the contract`, { x: 50, y: 700, font });
  return doc.save();
}

test('a seal with long-term data is B-LTA: qpdf, pdfsig and openssl (cms, ts, verify -crl_check) agree', async () => {
  const dir = await tempDir();
  const tmp = await pdfScratch('signet-lta-');
  try {
    // Real time (openssl checks validity against its own clock), with milliseconds the TSA and CRL must drop.
    const clock = new ManualClock(Date.now());
    const pki = await loadOrCreatePki({ dataDir: dir.path, clock, publicBaseUrl: 'https://signet.example.com' });
    const longTerm = { source: createValidationSource({ cas: [pki.ca], clock }), tsaIssuersDer: [pki.caCertDer] };
    const input = await samplePdf(3);
    const sealed = await sealPdf(input, { seal: pki.seal, tsa: pki.localTsa, clock, longTerm });
    assert.equal(sealed.padesLevel, 'B-LTA');
    assert.equal(sealed.padesNote, null);
    const report = assertPadesLta(tmp, sealed.pdf, pki.caCertPem, sealed.tsaSignedAt);
    assert.equal(createHash('sha256').update(report.sealedRevision).digest('hex'), sealed.sealRevisionSha256);
    assert.ok(
      sealed.lastTimestamp && sealed.lastTimestamp.certNotAfter > clock.now(),
      'the timestamp certificate is current',
    );
    assert.deepEqual(sealed.lastTimestamp.algorithms, ['sha256', 'ecdsa-with-sha256']);
    // The certificates name where the CRL and the CA certificate are published.
    for (const der of [pki.seal.certDer, pki.localTsa.certDer]) {
      const ext = spawnSync(
        'openssl',
        ['x509', '-inform', 'DER', '-noout', '-ext', 'crlDistributionPoints,authorityInfoAccess'],
        { input: der, encoding: 'utf8' },
      ).stdout;
      assert.match(ext, /URI:https:\/\/signet\.example\.com\/pki\/crl/);
      assert.match(ext, /CA Issuers - URI:https:\/\/signet\.example\.com\/pki\/ca\.crt/);
    }

    // The pages look as they did: the long-term revisions add nothing visible.
    for (const page of [1, 3]) assert.deepEqual(tmp.render(sealed.pdf, page).px, tmp.render(input, page).px);

    // A renewal appends a second document timestamp and keeps everything before it.
    clock.advance(2000);
    const renewed = await addArchiveTimestamp(sealed.pdf, { ...longTerm, tsa: pki.localTsa });
    assert.ok(
      Buffer.from(renewed.pdf.subarray(0, sealed.pdf.length)).equals(Buffer.from(sealed.pdf)),
      'the renewal only appends',
    );
    tmp.qpdfCheck(renewed.pdf);
    assert.match(tmp.poppler('pdfsig', renewed.pdf), /Signet document timestamp 2/);
  } finally {
    await tmp.cleanup();
    await dir.cleanup();
  }
});

test('without long-term data the seal stays B-T and says why', async () => {
  const dir = await tempDir();
  try {
    const clock = new ManualClock(Date.now());
    const pki = await loadOrCreatePki({ dataDir: dir.path, clock });
    const sealed = await sealPdf(await samplePdf(1), { seal: pki.seal, tsa: pki.localTsa, clock });
    assert.equal(sealed.padesLevel, 'B-T');
    assert.match(sealed.padesNote!, /no long-term validation data/);
    assert.equal(sealed.lastTimestamp, null);
  } finally {
    await dir.cleanup();
  }
});
