// The steps after a signature already in the file (issue 23: a qualified signer's) are incremental: stamping, the
// audit page and the seal append to the file, and every signature before them keeps verifying. Judged by pdfsig,
// qpdf, pdftotext and openssl, never by our own reader.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../lib/clock.js';
import { loadOrCreatePki, type Pki } from '../../pki/pki.js';
import { nssDbTrusting, run } from '../../pki/testing/tools.js';
import { createValidationSource } from '../../pki/validation-data.js';
import { appendAuditPage, type AuditInfo } from './audit-page.js';
import { closePdfWorkers } from './pool.js';
import { hasSignatures } from './seal.js';
import { sealPdf } from './seal.work.js';
import { type Stamp, stampPdf } from './stamp.js';
import { makeGarbage, makePdf } from './testing/fixtures.js';
import { extractSignature } from './testing/seal-fixtures.js';
import { pdfScratch, type PdfScratch } from './testing/tools.js';

// Near real time: NSS and openssl check certificate validity against the machine's clock.
const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000 + 321);
let tmp: PdfScratch;
let pki: Pki;
let nssDb: string;
// The earlier signature is made with another installation's seal: pdfsig (NSS) reports "Unknown issue with
// Certificate" for the second of two signatures by the same certificate, whatever wrote them.
let signer: Pki;
let signedOnce: Uint8Array;

before(async () => {
  tmp = await pdfScratch('signet-incsign-');
  pki = await loadOrCreatePki({ dataDir: path.join(tmp.path, 'data'), clock });
  signer = await loadOrCreatePki({ dataDir: path.join(tmp.path, 'signer'), clock });
  nssDb = await nssDbTrusting(tmp.path, pki.caCertPem);
  const signerCa = path.join(tmp.path, 'signer-ca.pem');
  writeFileSync(signerCa, signer.caCertPem);
  const added = await run('certutil', ['-A', '-n', 'signer-ca', '-t', 'CT,C,C', '-i', signerCa, '-d', nssDb]);
  assert.equal(added.code, 0, added.stderr);
  const input = await makePdf({ text: [['Employment contract', 'Signed by both parties below.']] });
  const first = { seal: signer.seal, tsa: signer.localTsa, clock, reason: 'First signature' };
  signedOnce = (await sealPdf(input, first)).pdf;
});
after(async () => {
  await tmp.cleanup();
  await closePdfWorkers();
});

const NAMES = ['Zoë Ångström', '王秀英', 'محمد'];
const stamps: Stamp[] = NAMES.map((text, i) => ({
  field: { id: `f${i}`, role: 'A', type: i === 1 ? 'text' : 'signature', page: 1, x: 72, y: 200 + i * 60, width: 260, height: 40 },
  value: i === 1 ? { kind: 'text', text } : { kind: 'typed', text },
})); // prettier-ignore

const audit: AuditInfo = {
  locale: 'en',
  documentId: 'doc_inc_23',
  title: 'Employment contract',
  originalSha256: 'ab'.repeat(32),
  signers: NAMES.map((name, i) => ({
    name,
    email: `s${i}@example.com`,
    role: `role${i}`,
    ip: null,
    userAgent: null,
    sentAt: null,
    viewedAt: null,
    signedAt: '2025-01-02T03:04:05Z',
  })),
  completedAt: '2025-01-02T03:04:05Z',
};

const isPrefix = (prefix: Uint8Array, of: Uint8Array) =>
  of.length > prefix.length && Buffer.from(of.subarray(0, prefix.length)).equals(Buffer.from(prefix));

/**
 * pdfsig's report; asserts it lists `count` signatures and that each CMS signature is valid with a trusted
 * certificate. pdfsig 22 does not check document timestamps ("not yet been verified"): openssl ts does, below.
 */
async function assertAllValid(pdf: Uint8Array, count: number): Promise<string> {
  const r = await run('pdfsig', ['-nssdir', nssDb, tmp.save(pdf)]);
  assert.equal(r.code, 0, r.stderr);
  const blocks = r.stdout.split(/^Signature #\d+:$/m).slice(1);
  assert.equal(blocks.length, count, r.stdout);
  for (const b of blocks) {
    if (/Signet document timestamp/.test(b)) continue;
    assert.match(b, /Signature Type: ETSI\.CAdES\.detached/, r.stdout);
    assert.match(b, /Signature Validation: Signature is Valid\./, r.stdout);
    assert.match(b, /Certificate Validation: Certificate is Trusted\./, r.stdout);
  }
  return r.stdout;
}

/** The shown text with pdftotext's bidi embedding marks removed. */
const shownText = (pdf: Uint8Array) => tmp.pdfText(pdf).replace(/[\u202a-\u202e]/g, '');

test('hasSignatures tells a signed file from an unsigned or unreadable one', async () => {
  assert.equal(hasSignatures(signedOnce), true);
  assert.equal(hasSignatures(await makePdf()), false);
  assert.equal(hasSignatures(await makePdf({ objectStreams: true, withForm: true })), false);
  assert.equal(hasSignatures(makeGarbage()), false);
});

test('rewriting a signed file (the default) breaks its signature: what the incremental mode is for', async () => {
  const rewritten = await stampPdf(signedOnce, stamps);
  assert.ok(!isPrefix(signedOnce, rewritten), 'a rewrite does not keep the prefix');
  const r = await run('pdfsig', ['-nssdir', nssDb, tmp.save(rewritten)]);
  assert.doesNotMatch(r.stdout, /Signature is Valid/, r.stdout);
});

test('pdf-lib edits append to a file whose last section is an xref stream with object streams', async () => {
  const input = await makePdf({ text: [['Compressed contract']], objectStreams: true, withForm: true });
  assert.match(Buffer.from(input).toString('latin1'), /\/ObjStm/, 'the input has object streams');
  const stamped = await stampPdf(input, stamps, { incremental: true });
  const audited = await appendAuditPage(stamped, audit, { incremental: true });
  assert.ok(isPrefix(input, stamped) && isPrefix(stamped, audited), 'each step only appends');
  tmp.qpdfCheck(audited);
  const text = shownText(audited);
  for (const name of NAMES) assert.ok(text.includes(name), `"${name}" stamped`);
  assert.match(text, /Compressed contract[\s\S]*Audit trail/);
});

test('stamp, audit page and seal after a signature are incremental and every signature stays valid, up to B-LTA', async () => {
  // (a) Stamps with names in three scripts.
  const stamped = await stampPdf(signedOnce, stamps, { incremental: true });
  assert.ok(isPrefix(signedOnce, stamped), 'the signed file is a prefix of the stamped one');
  tmp.qpdfCheck(stamped);
  await assertAllValid(stamped, 1);
  for (const name of NAMES) assert.ok(shownText(stamped).includes(name), `"${name}" stamped`);

  // (b) The audit page.
  const audited = await appendAuditPage(stamped, audit, { incremental: true });
  assert.ok(isPrefix(stamped, audited), 'the stamped file is a prefix of the audited one');
  tmp.qpdfCheck(audited);
  await assertAllValid(audited, 1);
  const pages = shownText(audited).split('\f');
  assert.match(pages[1], /Audit trail/);
  assert.match(pages[1], /doc_inc_23/);
  for (const name of NAMES) assert.ok(pages[0].includes(name), `"${name}" still on page 1`);

  // (c) The seal, incremental, extended to B-LTA.
  const source = createValidationSource({ cas: [pki.ca], clock });
  const sealed = await sealPdf(audited, {
    seal: pki.seal,
    tsa: pki.localTsa,
    clock,
    reason: 'Sealed after a qualified signature',
    incremental: true,
    longTerm: { source, tsaIssuersDer: [pki.caCertDer] },
  });
  assert.equal(sealed.padesLevel, 'B-LTA');
  assert.equal(sealed.padesNote, null);
  assert.ok(isPrefix(audited, sealed.pdf), 'the audited file is a prefix of the sealed one');
  tmp.qpdfCheck(sealed.pdf);
  const report = await assertAllValid(sealed.pdf, 3);
  assert.match(report, /Signature Field Name: Signet seal\n/);
  assert.match(report, /Signature Field Name: Signet document timestamp 1\n/);
  for (const name of NAMES) assert.ok(shownText(sealed.pdf).includes(name), `"${name}" in the sealed file`);

  // The document timestamp (the last /ByteRange) covers everything before it (openssl ts).
  const ts = extractSignature(sealed.pdf);
  const put = (name: string, data: Uint8Array) => {
    const p = path.join(tmp.path, name);
    writeFileSync(p, data);
    return p;
  };
  const caFile = put('ca.pem', Buffer.from(pki.caCertPem));
  // Its token's imprint is SHA-256 over the byte range, so openssl checks the range's bytes against it.
  const v = await run('openssl', [
    'ts', '-verify', '-data', put('ts.bin', ts.signedBytes), '-in', put('ts.der', ts.cmsDer), '-token_in',
    '-CAfile', caFile,
  ]); // prettier-ignore
  assert.match(v.stdout, /Verification: OK/, v.stdout + v.stderr);
});
