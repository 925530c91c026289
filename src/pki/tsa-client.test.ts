import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { ManualClock } from '../lib/clock.js';
import { ab, importSigningKey, pemToDer } from './cms.js';
import { createLocalTsa } from './local-tsa.js';
import { loadOrCreatePki, type Pki } from './pki.js';
import { createTsaClient } from './tsa-client.js';
import { run, tempDir } from './testing/tools.js';

type Handler = (req: Uint8Array) => Promise<{ status?: number; body: Uint8Array } | 'hang'>;

const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000 + 345);
let tmp: Awaited<ReturnType<typeof tempDir>>;
let pki: Pki;
let other: Pki;
let server: Server;
let base: string;
const handlers = new Map<string, Handler>();

before(async () => {
  tmp = await tempDir();
  pki = await loadOrCreatePki({ dataDir: join(tmp.path, 'a'), clock });
  other = await loadOrCreatePki({ dataDir: join(tmp.path, 'b'), clock });
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const handler = handlers.get(req.url ?? '');
      if (!handler || req.method !== 'POST' || req.headers['content-type'] !== 'application/timestamp-query') {
        res.writeHead(400).end();
        return;
      }
      const out = await handler(Buffer.concat(chunks));
      if (out === 'hang') return;
      res.writeHead(out.status ?? 200, { 'content-type': 'application/timestamp-reply' }).end(out.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await tmp.cleanup();
});

const ca = () => pemToDer(pki.caCertPem);
const imprint = createHash('sha256').update('signature value').digest();
const client = (path: string, handler: Handler, trusted: Uint8Array[] | undefined = [ca()], timeoutMs?: number) => {
  handlers.set(path, handler);
  return createTsaClient({ url: base + path, trustedCaDer: trusted, clock, timeoutMs });
};
const local = (req: Uint8Array) => pki.localTsa.handleTimestampQuery(req).then((body) => ({ body }));

/** Rewrites a field of the incoming request before the honest TSA answers it. */
const tamperRequest =
  (edit: (r: pkijs.TimeStampReq) => void): Handler =>
  async (der) => {
    const req = pkijs.TimeStampReq.fromBER(ab(der));
    edit(req);
    return local(new Uint8Array(req.toSchema().toBER()));
  };

test('a token from the local TSA over HTTP verifies, and openssl agrees', async () => {
  const tsa = client('/ok', local);
  assert.equal(tsa.provider, new URL(base).host);
  const token = await tsa.timestamp(imprint);
  assert.equal(token.signedAt, new Date(Math.floor(clock.now() / 1000) * 1000).toISOString());
  await writeFile(join(tmp.path, 'token.der'), token.tokenDer);
  await writeFile(join(tmp.path, 'ca.pem'), pki.caCertPem);
  const r = await run('openssl', [
    'ts',
    '-verify',
    '-in',
    join(tmp.path, 'token.der'),
    '-token_in',
    '-digest',
    imprint.toString('hex'),
    '-CAfile',
    join(tmp.path, 'ca.pem'),
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  // Without anchors the token is still checked for everything but the chain.
  await client('/ok-untrusting', local, undefined).timestamp(imprint);
});

test('nonce mismatch is rejected', async () => {
  const tsa = client(
    '/nonce',
    tamperRequest((r) => (r.nonce = new asn1js.Integer({ value: 42 }))),
  );
  await assert.rejects(tsa.timestamp(imprint), /TSA: nonce mismatch/);
});

test('a token for another imprint is rejected', async () => {
  const tsa = client(
    '/imprint',
    tamperRequest((r) => (r.messageImprint.hashedMessage = new asn1js.OctetString({ valueHex: new ArrayBuffer(32) }))),
  );
  await assert.rejects(tsa.timestamp(imprint), /TSA: token imprint does not match the request/);
});

test('a TSA chaining to an untrusted CA is rejected', async () => {
  const tsa = client('/untrusted', (req) => other.localTsa.handleTimestampQuery(req).then((body) => ({ body })));
  await assert.rejects(tsa.timestamp(imprint), /TSA: signer certificate is not trusted/);
});

test('a signer certificate without the critical timeStamping EKU is rejected', async () => {
  // Signed with the seal certificate (document-signing EKUs, not critical), which the CA trusts.
  const wrongCert = createLocalTsa({ certDer: pki.seal.certDer, privateKey: pki.seal.privateKey, clock });
  const tsa = client('/eku', (req) => wrongCert.handleTimestampQuery(req).then((body) => ({ body })));
  await assert.rejects(
    tsa.timestamp(imprint),
    /TSA: signer certificate lacks the critical timeStamping extended key usage/,
  );
});

test('a broken token signature is rejected', async () => {
  const tsa = client('/signature', async (der) => {
    const resp = pkijs.TimeStampResp.fromBER(ab((await local(der)).body));
    const sd = new pkijs.SignedData({ schema: resp.timeStampToken!.content });
    const sig = new Uint8Array(sd.signerInfos[0].signature.valueBlock.valueHexView);
    sig[sig.length - 1] ^= 0x01;
    sd.signerInfos[0].signature = new asn1js.OctetString({ valueHex: ab(sig) });
    resp.timeStampToken = new pkijs.ContentInfo({ contentType: '1.2.840.113549.1.7.2', content: sd.toSchema(true) });
    return { body: new Uint8Array(resp.toSchema().toBER()) };
  });
  await assert.rejects(tsa.timestamp(imprint), /TSA: token signature does not verify/);
});

test('genTime far from the local clock is rejected', async () => {
  // The genuine TSA key and certificate, an hour behind.
  const skewed = createLocalTsa({
    certDer: pki.localTsa.certDer,
    privateKey: await importSigningKey(pemToDer(await readFile(join(tmp.path, 'a', 'pki', 'tsa.key'), 'utf8'))),
    clock: new ManualClock(clock.now() - 3_600_000),
  });
  const tsa = client('/skew', (req) => skewed.handleTimestampQuery(req).then((body) => ({ body })));
  await assert.rejects(tsa.timestamp(imprint), /TSA: genTime .* is outside the request window/);
});

test('HTTP errors, rejections, garbage and timeouts are rejected', async () => {
  await assert.rejects(
    client('/500', async () => ({ status: 500, body: new Uint8Array() })).timestamp(imprint),
    /TSA: 127\.0\.0\.1:\d+ answered HTTP 500/,
  );
  await assert.rejects(
    client('/reject', () => local(new Uint8Array([0]))).timestamp(imprint),
    /TSA: request rejected \(status 2: malformed TimeStampReq\)/,
  );
  await assert.rejects(
    client('/garbage', async () => ({ body: new Uint8Array([1, 2, 3]) })).timestamp(imprint),
    /TSA: response is not a DER TimeStampResp/,
  );
  await assert.rejects(
    client('/hang', async () => 'hang', [ca()], 200).timestamp(imprint),
    /TSA: request to .* failed: no response within 200 ms/,
  );
});
