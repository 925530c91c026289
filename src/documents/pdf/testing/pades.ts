// Checks a sealed PDF's PAdES B-LTA structure with tools nobody here wrote: qpdf reads the objects (JSON) and checks
// the file and the seal's revision on its own, pdfsig (NSS) validates the seal, openssl verifies the seal's CMS,
// the document timestamp's RFC 3161 token and both certificates against the embedded CRL, and reads every time.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PdfScratch } from './tools.js';
import { listSignatures, sh } from './signature-list.js';

export type PadesReport = {
  /** The seal's revision: the file as the seal left it. */
  sealedRevision: Uint8Array;
  docTimestampTime: Date;
  crl: { thisUpdate: Date; nextUpdate: Date };
  signatureCount: number;
};

/**
 * Asserts `pdf` is a Signet B-LTA file: seal (pdfsig valid, openssl cms valid), then DSS, document timestamp
 * (openssl ts valid) and a last DSS; the seal's revision is a prefix that qpdf accepts alone; the CRL in the DSS
 * makes `openssl verify -crl_check` pass for the seal and TSA certificates; sealTimestamp <= CRL thisUpdate <=
 * document timestamp < nextUpdate.
 */
export function assertPadesLta(tmp: PdfScratch, pdf: Uint8Array, caPem: string, sealTimestamp: string): PadesReport {
  const { file, val, catalog, signatures: sigs } = listSignatures(tmp, pdf);
  const dir = path.dirname(file);
  const put = (name: string, data: Uint8Array | string) => {
    const p = path.join(dir, name);
    writeFileSync(p, data);
    return p;
  };
  const caFile = put('ca.pem', caPem);
  assert.equal(sigs.length, 2, 'one seal and one document timestamp');
  const [seal, ts] = sigs;
  assert.equal(seal.subFilter, '/ETSI.CAdES.detached');
  assert.equal(ts.type, '/DocTimeStamp');
  assert.equal(ts.subFilter, '/ETSI.RFC3161');

  // The seal's revision alone is a whole, valid, totally signed PDF: the sealed bytes are a prefix of the file.
  const sealedRevision = pdf.subarray(0, seal.end);
  assert.ok(sealedRevision.length < pdf.length, 'revisions follow the seal');
  tmp.qpdfCheck(sealedRevision);
  const alone = sh('pdfsig', [tmp.save(sealedRevision)]).stdout;
  assert.match(alone, /Total document signed/);
  const sig = sh('pdfsig', [file]).stdout;
  assert.match(sig.split('Signature #2')[0], /Signature Validation: Signature is Valid/, sig);

  const cms = sh('openssl', [
    'cms', '-verify', '-binary', '-inform', 'DER', '-in', put('seal.der', seal.der),
    '-content', put('seal.bin', seal.signed), '-CAfile', caFile, '-purpose', 'any', '-out', '/dev/null',
  ]); // prettier-ignore
  assert.equal(cms.status, 0, cms.stderr);
  const tokenFile = put('ts.der', ts.der);
  const tsv = sh('openssl', [
    'ts',
    '-verify',
    '-data',
    put('ts.bin', ts.signed),
    '-in',
    tokenFile,
    '-token_in',
    '-CAfile',
    caFile,
  ]);
  assert.match(tsv.stdout, /Verification: OK/, tsv.stdout + tsv.stderr);
  const tsText = sh('openssl', ['ts', '-reply', '-in', tokenFile, '-token_in', '-token_out', '-text']).stdout;
  const docTimestampTime = new Date(/Time stamp: (.*)/.exec(tsText)![1]);

  // The DSS: certificates and CRLs as qpdf reads them.
  const dss = val(catalog['/DSS']);
  const raw = (ref: string) =>
    spawnSync('qpdf', [`--show-object=${ref.split(' ')[0]}`, '--raw-stream-data', file], { maxBuffer: 1 << 24 })
      .stdout as Buffer;
  const certPems = (dss['/Certs'] as string[]).map((r, i) => {
    const p = put(`c${i}.der`, raw(r));
    return sh('openssl', ['x509', '-inform', 'DER', '-in', p]).stdout;
  });
  const crls = (dss['/CRLs'] as string[]).map((r, i) => put(`crl${i}.der`, raw(r)));
  assert.ok(crls.length >= 1, 'the DSS holds a CRL');
  const crlPem = sh('openssl', ['crl', '-inform', 'DER', '-in', crls[0]]).stdout;
  const dates = sh('openssl', ['crl', '-inform', 'DER', '-in', crls[0], '-noout', '-lastupdate', '-nextupdate']).stdout;
  const thisUpdate = new Date(/lastUpdate=(.*)/.exec(dates)![1]);
  const nextUpdate = new Date(/nextUpdate=(.*)/.exec(dates)![1]);
  const chainFile = put('ca-crl.pem', caPem + crlPem);
  for (const [i, pem] of certPems.entries()) {
    const subject = spawnSync('openssl', ['x509', '-noout', '-subject'], { input: pem, encoding: 'utf8' }).stdout;
    if (!/Seal|TSA/.test(subject)) continue;
    // At the document timestamp's time (tests may run on a clock of their own): the CRL must cover it.
    const at = String(Math.floor(docTimestampTime.getTime() / 1000));
    const v = sh('openssl', ['verify', '-attime', at, '-crl_check', '-CAfile', chainFile, put(`leaf${i}.pem`, pem)]);
    assert.equal(v.status, 0, `openssl verify -crl_check ${subject}: ${v.stdout}${v.stderr}`);
  }
  assert.ok(thisUpdate.getTime() >= new Date(sealTimestamp).getTime(), 'CRL issued at or after the seal timestamp');
  assert.ok(
    docTimestampTime >= thisUpdate && docTimestampTime < nextUpdate,
    'document timestamp inside the CRL window',
  );
  return { sealedRevision, docTimestampTime, crl: { thisUpdate, nextUpdate }, signatureCount: sigs.length };
}
