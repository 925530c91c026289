// SEAL_P12 from a foreign CA: where the issuer publishes a CRL (named in the seal certificate, served here on
// loopback) the seal reaches B-LTA with that CRL in the DSS; where it publishes none, the seal stays B-T and says why.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { verifyInWorker } from '../documents/pdf/verify.work.js';
import { ManualClock } from '../lib/clock.js';
import { pemToDer } from '../pki/cms.js';
import { loadOrCreateCas } from '../pki/pki.js';
import { issue, makeRoot, opensslCrl } from '../pki/testing/foreign-ca.js';
import { run, tempDir } from '../pki/testing/tools.js';
import { createPkiServices } from '../runtime.js';

const SEAL_EXT = 'keyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=emailProtection';

describe('a SEAL_P12 identity from a foreign CA', () => {
  const clock = new ManualClock(Date.now());
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: http.Server;
  let crlRequests = 0;
  let base = '';
  before(async () => {
    dir = await tempDir();
    server = http.createServer((req, res) => {
      crlRequests++;
      if (req.url !== '/root.crl') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(readFileSync(path.join(dir.path, 'root.crl')));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await makeRoot(dir.path, 'Foreign Trust Root');
    const crl = await opensslCrl(dir.path, 'root', {
      lastUpdate: new Date(clock.now() - 3600_000),
      nextUpdate: new Date(clock.now() + 24 * 3600_000),
    });
    writeFileSync(path.join(dir.path, 'root.crl'), crl);
  });
  after(async () => {
    server.close();
    await dir.cleanup();
  });

  async function sealWith(name: string, ext: string) {
    await issue(dir.path, name, 'root', { cn: `Acme Seal ${name}`, ext });
    // openssl dates the certificate by the real clock: seal after it, as a real seal would be.
    clock.set(Date.now() + 1000);
    const p12 = path.join(dir.path, `${name}.p12`);
    const f = (n: string) => path.join(dir.path, n);
    const r = await run('openssl', [
      'pkcs12', '-export', '-inkey', f(`${name}.key`), '-in', f(`${name}.crt`), '-certfile', f('root.crt'),
      '-out', p12, '-passout', 'pass:pw',
    ]); // prettier-ignore
    assert.equal(r.code, 0, r.stderr);
    const config = loadConfig({
      DATA_DIR: path.join(dir.path, `data-${name}`),
      SEAL_P12: p12,
      SEAL_P12_PASSWORD: 'pw',
      SIGNET_ALLOW_PRIVATE_NETWORK: '1',
      LOG_LEVEL: 'silent',
    });
    const services = await createPkiServices(config, clock);
    try {
      const sealed = await services.sealer.seal(await makePdf({ pages: 1, text: [['Lieferauftrag']] }));
      const cas = await loadOrCreateCas({ dataDir: config.dataDir, clock });
      const anchorsDer = [pemToDer(readFileSync(f('root.crt'), 'utf8')), ...cas.map((c) => c.caCertDer)];
      const report = await verifyInWorker(sealed.pdf, { anchorsDer, crlsDer: [], nowMs: clock.now() });
      return { sealed, report };
    } finally {
      await services.sealer.close();
    }
  }

  test('the issuer publishes a CRL: B-LTA, and the file verifies valid against that root', async () => {
    const { sealed, report } = await sealWith('published', `${SEAL_EXT}\ncrlDistributionPoints=URI:${base}/root.crl`);
    assert.equal(sealed.padesLevel, 'B-LTA', sealed.padesNote ?? '');
    assert.equal(sealed.padesNote, null);
    assert.ok(crlRequests >= 1, 'the CRL was fetched from where the certificate says');
    assert.equal(report.verdict, 'valid', JSON.stringify(report.signatures.map((s) => s.problems)));
    assert.equal(report.pades_level, 'B-LTA');
    assert.match(report.signatures[0]!.signer!.issuer, /Foreign Trust Root/);
  });

  test('the issuer publishes nothing: B-T, and the note says which certificate lacks what', async () => {
    const { sealed, report } = await sealWith('silent', SEAL_EXT);
    assert.equal(sealed.padesLevel, 'B-T');
    assert.match(sealed.padesNote!, /Acme Seal silent: no CRL distribution point/);
    assert.equal(report.pades_level, 'B-T');
    assert.equal(report.signatures.length, 1, 'nothing was appended');
  });
});
