import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as pkijs from 'pkijs';
import { ManualClock } from '../../lib/clock.js';
import { ab, OID, pemToDer } from '../../pki/cms.js';
import { loadOrCreatePki, type Pki } from '../../pki/pki.js';
import { createTsaClient } from '../../pki/tsa-client.js';
import { nssDbTrusting, run } from '../../pki/testing/tools.js';
import { createSealer } from './seal.js';
import { sealPdf } from './seal.work.js';
import { extractSignature, makeTextPdf } from './testing/seal-fixtures.js';
import { pdfScratch, type PdfScratch } from './testing/tools.js';

// Near real time: openssl and NSS check certificate validity against the machine's clock.
const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000 + 457);
let tmp: PdfScratch;
let pki: Pki;
let nssDb: string;
let caFile: string;
let onePage: Uint8Array;
let hundredPages: Uint8Array;
const f = (name: string) => join(tmp.path, name);

before(async () => {
  tmp = await pdfScratch('signet-seal-');
  pki = await loadOrCreatePki({ dataDir: f('data'), clock });
  caFile = f('ca.pem');
  await writeFile(caFile, pki.caCertPem);
  await mkdir(f('nss'));
  nssDb = await nssDbTrusting(f('nss'), pki.caCertPem);
  onePage = await makeTextPdf(1);
  hundredPages = await makeTextPdf(100);
});

after(() => tmp.cleanup());

/** The checks every sealed file must pass, all by external tools. */
async function assertSealedValid(pdf: Uint8Array, name: string, tsaCaFile = caFile): Promise<void> {
  const file = tmp.save(pdf, `${name}.pdf`);

  const sig = await run('pdfsig', ['-nssdir', nssDb, file]);
  assert.equal(sig.code, 0, sig.stderr);
  assert.match(sig.stdout, /Signature Type: ETSI\.CAdES\.detached/);
  assert.match(sig.stdout, /Total document signed/);
  assert.match(sig.stdout, /Signature Validation: Signature is Valid\./);
  assert.match(sig.stdout, /Certificate Validation: Certificate is Trusted\./);

  tmp.qpdfCheck(pdf);

  const { byteRange, signedBytes, cmsDer } = extractSignature(pdf);
  assert.equal(byteRange[0], 0);
  assert.equal(byteRange[2] + byteRange[3], pdf.byteLength, 'the second range runs to the end of the file');
  await writeFile(f(`${name}.sig.der`), cmsDer);
  await writeFile(f(`${name}.signed.bin`), signedBytes);
  const cms = await run('openssl', [
    'cms',
    '-verify',
    '-binary',
    '-inform',
    'DER',
    '-in',
    f(`${name}.sig.der`),
    '-content',
    f(`${name}.signed.bin`),
    '-CAfile',
    caFile,
    '-purpose',
    'any',
    '-out',
    '/dev/null',
  ]);
  assert.equal(cms.code, 0, cms.stderr);
  assert.match(cms.stderr, /Verification successful/);

  // Signed attributes: contentType, messageDigest, signing-certificate-v2, and no signing-time.
  const printed = (await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', f(`${name}.sig.der`)]))
    .stdout;
  const signedAttrs = printed.slice(
    printed.indexOf('signedAttrs:'),
    printed.indexOf('signatureAlgorithm:', printed.indexOf('signedAttrs:')),
  );
  assert.match(signedAttrs, /contentType/);
  assert.match(signedAttrs, /messageDigest/);
  assert.match(signedAttrs, /id-smime-aa-signingCertificateV2/);
  assert.doesNotMatch(printed, /signingTime/);
  assert.match(printed.slice(printed.indexOf('unsignedAttrs:')), /id-smime-aa-timeStampToken/);

  // The timestamp token covers SHA-256 of the signature value.
  const sd = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(ab(cmsDer)).content });
  const si = sd.signerInfos[0];
  const tokenAttr = si.unsignedAttrs!.attributes.find((a) => a.type === OID.signatureTimeStampToken)!;
  await writeFile(f(`${name}.token.der`), new Uint8Array(tokenAttr.values[0].toBER()));
  const sigDigest = createHash('sha256').update(si.signature.valueBlock.valueHexView).digest('hex');
  const ts = await run('openssl', [
    'ts',
    '-verify',
    '-in',
    f(`${name}.token.der`),
    '-token_in',
    '-digest',
    sigDigest,
    '-CAfile',
    tsaCaFile,
  ]);
  assert.equal(ts.code, 0, ts.stdout + ts.stderr);
  assert.match(ts.stdout, /Verification: OK/);
}

test('a sealed PDF is PAdES B-T: pdfsig, qpdf and openssl (cms, ts) all accept it', async () => {
  const result = await sealPdf(onePage, {
    seal: pki.seal,
    tsa: pki.localTsa,
    clock,
    reason: 'Signed by all parties: Vertrag (Entwurf) für Zoë \\ 合同',
    location: 'Berlin',
  });
  await assertSealedValid(result.pdf, 'one');
  assert.equal(result.certSerial, pki.seal.serialHex);
  assert.equal(result.tsaProvider, 'local');
  assert.equal(result.tsaSignedAt, new Date(Math.floor(clock.now() / 1000) * 1000).toISOString());

  const serial = (await run('openssl', ['x509', '-in', join(f('data'), 'pki', 'seal.crt'), '-noout', '-serial']))
    .stdout;
  assert.equal(serial.trim(), `serial=${result.certSerial.toUpperCase()}`);

  // The signature dictionary's text survives non-ASCII and PDF delimiters (qpdf decodes it independently).
  const json = JSON.parse((await run('qpdf', ['--json=2', '--json-key=qpdf', f('one.pdf')])).stdout);
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const sigDict = Object.values(objects).find((o) => o.value?.['/Type'] === '/Sig')!.value!;
  assert.equal(sigDict['/Reason'], 'u:Signed by all parties: Vertrag (Entwurf) für Zoë \\ 合同');
  assert.equal(sigDict['/Location'], 'u:Berlin');
  assert.equal(sigDict['/SubFilter'], '/ETSI.CAdES.detached');
});

test('changing one signed byte breaks the seal', async () => {
  const { pdf } = await sealPdf(onePage, { seal: pki.seal, tsa: pki.localTsa, clock });
  const tampered = Buffer.from(pdf);
  const at = 10; // in the binary comment after the header: still a parseable PDF
  assert.ok(at < extractSignature(pdf).byteRange[1], 'at < extractSignature(pdf).byteRange[1]');
  tampered[at] ^= 0x01;
  const sig = await run('pdfsig', ['-nssdir', nssDb, tmp.save(tampered, 'tampered.pdf')]);
  assert.match(sig.stdout, /Signature Validation: /);
  assert.doesNotMatch(sig.stdout, /Signature is Valid/);
});

test('the worker sealer: 100 pages off the event loop, with an RFC 3161 TSA over HTTP', async (t) => {
  const sealer = createSealer({ pki, clock, poolSize: 1 });
  t.after(() => sealer.close());
  await sealer.seal(onePage); // worker start-up (tsx, pdf-lib, pkijs) is not what we measure

  const p50 = async (pdf: Uint8Array, n: number, seal: (pdf: Uint8Array) => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await seal(pdf);
      times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[Math.floor(n / 2)];
  };
  const inline = (pdf: Uint8Array) => sealPdf(pdf, { seal: pki.seal, tsa: pki.localTsa, clock });
  const inline1 = await p50(onePage, 3, inline);
  const inline100 = await p50(hundredPages, 3, inline);
  const worker1 = await p50(onePage, 3, (pdf) => sealer.seal(pdf));

  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const worker100 = await p50(hundredPages, 5, (pdf) => sealer.seal(pdf));
  delay.disable();
  t.diagnostic(
    `seal p50 ms: in-process 1 page ${inline1.toFixed(1)}, 100 pages ${inline100.toFixed(1)}; ` +
      `worker 1 page ${worker1.toFixed(1)}, 100 pages ${worker100.toFixed(1)}; ` +
      `event-loop delay while sealing 100 pages: p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`,
  );

  const result = await sealer.seal(hundredPages, { reason: 'Completed' });
  await assertSealedValid(result.pdf, 'hundred');

  // External TSA: a second installation's TSA behind a real HTTP server, reached through the client.
  const remote = await loadOrCreatePki({ dataDir: f('remote'), clock });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () =>
      res
        .writeHead(200, { 'content-type': 'application/timestamp-reply' })
        .end(await remote.localTsa.handleTimestampQuery(Buffer.concat(chunks))),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`;
  const remoteCa = f('remote-ca.pem');
  await writeFile(remoteCa, remote.caCertPem);
  const viaHttp = createSealer({
    pki,
    tsa: createTsaClient({ url, clock, trustedCaDer: [pemToDer(remote.caCertPem)] }),
    clock,
    poolSize: 1,
  });
  t.after(() => viaHttp.close());
  const external = await viaHttp.seal(onePage, {});
  assert.equal(external.tsaProvider, new URL(url).host);
  await assertSealedValid(external.pdf, 'external', remoteCa);
});
