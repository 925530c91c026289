// Judges a qualified document's sealed PDF with tools nobody here wrote: qpdf lists the signature fields, openssl
// verifies each signer signature's CMS against the test QTSP's CA and names its signing certificate, pdfsig
// validates every signature, and each signature's revision (the bytes it covers) is a prefix of the file that
// qpdf accepts alone.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PdfScratch } from '../../documents/pdf/testing/tools.js';
import { listSignatures, sh } from '../../documents/pdf/testing/signature-list.js';

export type JudgedSignature = {
  kind: 'signature' | 'document_timestamp';
  name: string;
  /** The signed revision's end: the file up to here is that revision. */
  end: number;
  /** The signing certificate, PEM (CMS signatures only). */
  signerPem: string | null;
  /** openssl cms -verify against the QTSP's CA passed. */
  qtspVerified: boolean;
  /** SHA-256 of the signed attributes (hex): the hash the provider signed. */
  signedAttrsSha256: string | null;
};

export function judgeSignatures(tmp: PdfScratch, pdf: Uint8Array, qtspCaPem: string): JudgedSignature[] {
  const { file, signatures } = listSignatures(tmp, pdf);
  const dir = path.dirname(file);
  const put = (name: string, data: Uint8Array | string) => {
    const p = path.join(dir, name);
    writeFileSync(p, data);
    return p;
  };
  const caFile = put('qtsp-ca.pem', qtspCaPem);
  const out: JudgedSignature[] = [];
  for (const [i, { type, name, end, der: contents, signed }] of signatures.entries()) {
    tmp.qpdfCheck(pdf.subarray(0, end));
    if (type === '/DocTimeStamp') {
      out.push({
        kind: 'document_timestamp',
        name,
        end,
        signerPem: null,
        qtspVerified: false,
        signedAttrsSha256: null,
      });
      continue;
    }
    const cmsFile = put(`sig${i}.der`, contents);
    const signerFile = path.join(dir, `signer${i}.pem`);
    const cms = sh('openssl', [
      'cms', '-verify', '-binary', '-inform', 'DER', '-in', cmsFile, '-content', put(`sig${i}.bin`, signed),
      '-CAfile', caFile, '-purpose', 'any', '-signer', signerFile, '-out', '/dev/null',
    ]); // prettier-ignore
    const parsed = sh('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', cmsFile, '-noout']).stdout;
    const attrs = /signedAttrs:[\s\S]*?unsignedAttrs/.test(parsed);
    out.push({
      kind: 'signature',
      name,
      end,
      signerPem: cms.status === 0 ? readFileSync(signerFile, 'utf8') : null,
      qtspVerified: cms.status === 0,
      signedAttrsSha256: attrs ? signedAttrsHash(contents) : null,
    });
  }
  return out.sort((a, b) => a.end - b.end);
}

/** SHA-256 of the DER signed attributes (re-tagged as a SET), read with asn1parse offsets. */
function signedAttrsHash(cms: Buffer): string {
  const lines = spawnSync('openssl', ['asn1parse', '-inform', 'DER'], { input: cms, encoding: 'utf8' }).stdout.split(
    '\n',
  );
  // The first context-specific [0] at the SignerInfo's depth after the digest algorithm is signedAttrs: the one
  // whose first child is a SEQUENCE holding the contentType OID.
  for (const [i, line] of lines.entries()) {
    const m = /^\s*(\d+):d=\s*(\d+)\s+hl=\s*(\d+)\s+l=\s*(\d+)\s+cons: cont \[ 0 \]/.exec(line);
    if (!m || !/contentType/.test(lines[i + 2] ?? '')) continue;
    const [at, hl, len] = [Number(m[1]), Number(m[3]), Number(m[4])];
    const set = Buffer.from(cms.subarray(at, at + hl + len));
    set[0] = 0x31;
    return spawnSync('openssl', ['dgst', '-sha256', '-r'], { input: set }).stdout.toString().split(' ')[0]!;
  }
  return '';
}

/** pdfsig's verdict on every CMS signature: each "Signature is Valid" (pdfsig does not check document timestamps). */
export function pdfsigAllValid(tmp: PdfScratch, pdf: Uint8Array): { count: number; text: string } {
  const text = sh('pdfsig', [tmp.save(pdf)]).stdout;
  const blocks = text.split(/^Signature #\d+:/m).slice(1);
  for (const b of blocks.filter((x) => /Signature Type: ETSI\.CAdES\.detached/.test(x)))
    assert.match(b, /Signature Validation: Signature is Valid/, text);
  return { count: blocks.length, text };
}
