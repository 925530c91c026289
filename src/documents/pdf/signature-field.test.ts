import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { run } from '../../pki/testing/tools.js';
import { prepareSignatureField, writeContents, type PreparedSignatureField } from './signature-field.js';
import { makePdf } from './testing/fixtures.js';
import { pdfScratch, type PdfScratch } from './testing/tools.js';

let tmp: PdfScratch;
let certFile: string;
let keyFile: string;
before(async () => {
  tmp = await pdfScratch('signet-sigfield-');
  certFile = path.join(tmp.path, 'signer.pem');
  keyFile = path.join(tmp.path, 'signer.key');
  const r = await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=Field Test Signer', '-keyout', keyFile, '-out', certFile,
  ]); // prettier-ignore
  assert.equal(r.code, 0, r.stderr);
});
after(() => tmp.cleanup());

/** The bytes the range covers: everything but /Contents <...>. */
const signedBytes = (p: PreparedSignatureField) =>
  Buffer.concat([p.pdf.subarray(0, p.contentsOffset - 1), p.pdf.subarray(p.contentsOffset + p.contentsHexLength + 1)]);

/** A CMS made by openssl over the prepared range (no signed attributes: the digest is the content's). */
async function opensslSign(p: PreparedSignatureField): Promise<Uint8Array> {
  const input = tmp.save(signedBytes(p), 'range.bin');
  const out = path.join(tmp.path, 'sig.der');
  const r = await run('openssl', [
    'cms', '-sign', '-binary', '-outform', 'DER', '-noattr', '-md', 'sha256',
    '-in', input, '-signer', certFile, '-inkey', keyFile, '-out', out,
  ]); // prettier-ignore
  assert.equal(r.code, 0, r.stderr);
  return new Uint8Array(readFileSync(out));
}

type QpdfObjects = Record<string, { value?: any; stream?: { dict: any } }>;
async function qpdfJson(pdf: Uint8Array): Promise<QpdfObjects> {
  const r = await run('qpdf', ['--json=2', '--json-key=qpdf', tmp.save(pdf)]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { qpdf: [unknown, QpdfObjects] }).qpdf[1];
}

for (const objectStreams of [false, true]) {
  test(`a signature field signed by openssl verifies in pdfsig and keeps the input as a prefix (object streams: ${objectStreams})`, async () => {
    const input = await makePdf({ text: [['Contract body']], withForm: true, objectStreams });
    const signingTimeMs = Date.UTC(2025, 2, 4, 5, 6, 7);
    const prepared = prepareSignatureField(input, {
      kind: 'signature',
      fieldName: 'Signet seal',
      name: 'Zoë Ångström',
      reason: '合同 (signed)',
      signingTimeMs,
      placeholderBytes: 8192,
    });
    assert.ok(Buffer.from(prepared.pdf.subarray(0, input.length)).equals(Buffer.from(input)), 'input is a prefix');
    assert.equal(prepared.contentsHexLength, 8192 * 2);
    assert.equal(
      Buffer.from(prepared.digest).toString('hex'),
      createHash('sha256').update(signedBytes(prepared)).digest('hex'),
      'digest is SHA-256 over the byte range',
    );
    const once = writeContents(prepared, await opensslSign(prepared));
    tmp.qpdfCheck(once);
    const sig = tmp.poppler('pdfsig', once);
    assert.match(sig, /Signature #1/);
    assert.doesNotMatch(sig, /Signature #2/);
    assert.match(sig, /Signer Certificate Common Name: Field Test Signer/);
    assert.match(sig, /Signature Type: ETSI\.CAdES\.detached/);
    assert.match(sig, /Signature Validation: Signature is Valid\./);
    assert.match(sig, /Total document signed/);

    // qpdf decodes the dictionary on its own: text strings, the date, the field in the form and on page 1.
    const objs = await qpdfJson(once);
    const val = (ref: string) => objs[`obj:${ref}`]?.value ?? objs[`obj:${ref}`]?.stream?.dict;
    const sigDict = Object.values(objs).find((o) => o.value?.['/Type'] === '/Sig')!.value;
    assert.equal(sigDict['/Name'], 'u:Zoë Ångström');
    assert.equal(sigDict['/Reason'], 'u:合同 (signed)');
    assert.equal(sigDict['/M'], 'u:D:20250304050607Z');
    const catalog = val(objs.trailer.value['/Root']);
    const form = typeof catalog['/AcroForm'] === 'string' ? val(catalog['/AcroForm']) : catalog['/AcroForm'];
    assert.equal(form['/SigFlags'], 3);
    const fields = (form['/Fields'] as string[]).map((r) => ({ ref: r, d: val(r) }));
    assert.deepEqual(
      fields.map((f) => f.d['/T']),
      ['u:company', 'u:Signet seal'],
    );
    const widget = fields[1];
    assert.equal(widget.d['/F'], 132);
    const page = val(widget.d['/P']);
    const annots = typeof page['/Annots'] === 'string' ? val(page['/Annots']) : page['/Annots'];
    assert.ok((annots as string[]).includes(widget.ref), 'the widget is in page 1 /Annots');

    // A second signature over the first: a unique field name, and both still verify.
    const second = prepareSignatureField(once, {
      kind: 'signature',
      fieldName: 'Signet seal',
      signingTimeMs,
      placeholderBytes: 8192,
    });
    const twice = writeContents(second, await opensslSign(second));
    assert.ok(Buffer.from(twice.subarray(0, once.length)).equals(Buffer.from(once)), 'first signed file is a prefix');
    tmp.qpdfCheck(twice);
    const both = tmp.poppler('pdfsig', twice);
    assert.equal(both.match(/Signature is Valid\./g)?.length, 2, both);
    const names = Object.values(await qpdfJson(twice))
      .map((o) => o.value)
      .filter((v) => v?.['/FT'] === '/Sig')
      .map((v) => v['/T']);
    assert.deepEqual(names.sort(), ['u:Signet seal', 'u:Signet seal 2']);
  });
}

test('writeContents refuses a signature larger than the placeholder, and a document timestamp field keeps its name', async () => {
  const input = await makePdf();
  const prepared = prepareSignatureField(input, {
    kind: 'signature',
    fieldName: 'Small',
    signingTimeMs: 0,
    placeholderBytes: 16,
  });
  assert.throws(() => writeContents(prepared, new Uint8Array(17)), /exceed the 16-byte placeholder/);
  assert.doesNotThrow(() => writeContents(prepared, new Uint8Array(16).fill(0x30)));

  const ts = prepareSignatureField(input, { kind: 'doc_timestamp' });
  const text = Buffer.from(ts.pdf).toString('latin1');
  assert.match(text, /\/Type \/DocTimeStamp \/Filter \/Adobe\.PPKLite \/SubFilter \/ETSI\.RFC3161/);
  const names = Object.values(await qpdfJson(ts.pdf))
    .map((o) => o.value)
    .filter((v) => v?.['/FT'] === '/Sig')
    .map((v) => v['/T']);
  assert.deepEqual(names, ['u:Signet document timestamp 1']);
});
