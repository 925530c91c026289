// The signature fields of a PDF as qpdf (a tool nobody here wrote) reads them, for the tests' judges (pades.ts,
// qes/testing/judge.ts): each field's dictionary, its byte range, its CMS or token with the zero padding cut, and
// the bytes it covers, ordered by where its revision ends.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { PdfScratch } from './tools.js';

/** Runs a tool nobody here wrote; fails the test if it cannot start (its exit status is the caller's to judge). */
export const sh = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.error, undefined, `${cmd} runs`);
  return r;
};

type QpdfObjects = Record<string, { value?: any; stream?: { dict: any } }>;

export type ListedSignature = {
  /** The field's /T. */
  name: string;
  /** The value's /Type: '/DocTimeStamp' for a document timestamp, else usually '/Sig' or undefined. */
  type: string | undefined;
  subFilter: string;
  range: number[];
  /** The signed revision's end: the file up to here is that revision. */
  end: number;
  /** /Contents without the zero padding after the DER (its outer length says where it ends). */
  der: Buffer;
  /** The bytes the signature covers. */
  signed: Buffer;
};

export type SignatureListing = {
  /** Where the PDF was saved for the tools. */
  file: string;
  /** An object by reference ("12 0 R"): its value, or its stream's dictionary. */
  val: (ref: string) => any;
  catalog: any;
  signatures: ListedSignature[];
};

const trimDer = (b: Buffer) => {
  const len = b[1] & 0x80 ? b.subarray(2, 2 + (b[1] & 0x7f)).reduce((n, x) => n * 256 + x, 0) : b[1];
  return b.subarray(0, 2 + (b[1] & 0x80 ? b[1] & 0x7f : 0) + len);
};

/** qpdf --check passes on the whole file, then every signature field is read from qpdf's JSON. */
export function listSignatures(tmp: PdfScratch, pdf: Uint8Array): SignatureListing {
  const file = tmp.save(pdf);
  tmp.qpdfCheck(pdf);
  const json = JSON.parse(sh('qpdf', ['--json=2', '--json-key=qpdf', file]).stdout) as { qpdf: [unknown, QpdfObjects] };
  const objs = json.qpdf[1];
  const val = (ref: string) => objs[`obj:${ref}`]?.value ?? objs[`obj:${ref}`]?.stream?.dict;
  const catalog = val(objs.trailer.value['/Root']);
  const form = typeof catalog['/AcroForm'] === 'string' ? val(catalog['/AcroForm']) : catalog['/AcroForm'];
  const signatures = ((form?.['/Fields'] ?? []) as string[])
    .map((ref) => val(ref))
    .filter((f) => f['/FT'] === '/Sig' && f['/V'])
    .map((f): ListedSignature => {
      const v = val(f['/V']);
      const range = v['/ByteRange'] as number[];
      const end = range[2] + range[3];
      return {
        name: String(f['/T']).replace(/^u:/, ''),
        type: v['/Type'] as string | undefined,
        subFilter: v['/SubFilter'] as string,
        range,
        end,
        der: trimDer(Buffer.from(String(v['/Contents']).replace(/^b:/, ''), 'hex')),
        signed: Buffer.concat([pdf.subarray(range[0], range[1]), pdf.subarray(range[2], end)]),
      };
    })
    .sort((a, b) => a.end - b.end);
  return { file, val, catalog, signatures };
}
