import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ManualClock } from '../lib/clock.js';
import { derToPem } from './cms.js';
import { createRevocationFetcher, type RevocationFetcher } from './revocation-fetch.js';
import { issue, makeCrl, makeRoot, opensslCrl, rogueKey, type Issued } from './testing/foreign-ca.js';
import { run, tempDir } from './testing/tools.js';

const HOUR = 3_600_000;
// Set to now once the certificates exist, so openssl's check of those (now-dated) certificates agrees.
const clock = new ManualClock();

// What the CRL server answers per path, and how often each path was asked.
type Answer = { status: number; body?: Uint8Array | string; chunked?: boolean; location?: string; hang?: boolean };
const routes = new Map<string, Answer>();
const hits = new Map<string, number>();
let server: Server;
let base = '';
let cleanup: () => Promise<void>;
let dir = '';
const served: Record<'root' | 'int', Uint8Array> = { root: new Uint8Array(), int: new Uint8Array() };
const pki = {} as Record<
  'root' | 'int' | 'leaf' | 'noCdp' | 'gone' | 'revoked' | 'moved' | 'big' | 'elsewhere',
  Issued
>;

before(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const a = routes.get(path) ?? { status: 404, body: 'not here' };
    if (a.hang) return; // never answers: the fetcher's deadline must end the wait
    if (a.location) res.setHeader('location', a.location);
    if (a.chunked) {
      // No content-length: the fetcher must stop reading at its limit by itself.
      res.writeHead(a.status);
      const body = Buffer.from(a.body ?? '');
      for (let i = 0; i < body.length; i += 1000) res.write(body.subarray(i, i + 1000));
      res.end();
      return;
    }
    res.writeHead(a.status, { 'content-type': 'application/pkix-crl' });
    res.end(a.body === undefined ? undefined : Buffer.from(a.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const tmp = await tempDir('signet-revfetch-');
  cleanup = tmp.cleanup;
  dir = tmp.path;
  const cdp = (path: string) => `crlDistributionPoints=URI:${base}${path}`;
  const leafExt = (path: string) => `keyUsage=critical,digitalSignature\n${cdp(path)}`;
  pki.root = await makeRoot(dir, 'Foreign Root');
  pki.int = await issue(dir, 'int', 'root', {
    cn: 'Foreign Intermediate',
    ext: `basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n${cdp('/root.crl')}`,
  });
  // An ldap point comes first: it is skipped, the http one is used.
  pki.leaf = await issue(dir, 'leaf', 'int', {
    cn: 'Foreign Seal',
    ext: `keyUsage=critical,digitalSignature\ncrlDistributionPoints=URI:ldap://ldap.example/crl,URI:${base}/int.crl`,
  });
  pki.noCdp = await issue(dir, 'nocdp', 'int', { cn: 'No CDP', ext: 'keyUsage=critical,digitalSignature' });
  pki.gone = await issue(dir, 'gone', 'int', { cn: 'Gone', ext: leafExt('/missing.crl') });
  pki.revoked = await issue(dir, 'revoked', 'int', { cn: 'Revoked', ext: leafExt('/int.crl'), serial: '0x00a1b2' });
  pki.moved = await issue(dir, 'moved', 'int', { cn: 'Moved', ext: leafExt('/moved.crl') });
  pki.big = await issue(dir, 'big', 'int', { cn: 'Big', ext: leafExt('/big.crl') });
  pki.elsewhere = await issue(dir, 'elsewhere', 'int', { cn: 'Elsewhere', ext: leafExt('/elsewhere.crl') });
  clock.set(Date.now()); // after every certificate's notBefore
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await cleanup();
});

/** Fresh routes and counters, the standard CRLs current at the clock's time, and a fetcher closed by the test. */
async function setup(
  t: { after(fn: () => Promise<void>): void },
  opts: { allowPrivateNetwork?: boolean; maxBytes?: number; timeoutMs?: number } = {},
): Promise<RevocationFetcher> {
  routes.clear();
  hits.clear();
  const window = { lastUpdate: new Date(clock.now() - HOUR), nextUpdate: new Date(clock.now() + 24 * HOUR) };
  const rootCrl = await opensslCrl(dir, 'root', window);
  const intCrl = await opensslCrl(dir, 'int', { ...window, revoked: [pki.revoked] });
  served.root = rootCrl;
  served.int = intCrl;
  routes.set('/root.crl', { status: 200, body: derToPem(rootCrl, 'X509 CRL') }); // PEM is accepted too
  routes.set('/int.crl', { status: 200, body: intCrl });
  routes.set('/moved.crl', { status: 302, location: '/int.crl' });
  const fetcher = createRevocationFetcher({
    clock,
    allowPrivateNetwork: opts.allowPrivateNetwork ?? true,
    ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  });
  t.after(() => fetcher.close());
  return fetcher;
}

const chain = (leaf: Issued) => [leaf.der, pki.int.der, pki.root.der];

test('a complete chain gets one verified CRL per non-self-signed certificate', async (t) => {
  const fetcher = await setup(t);
  const r = await fetcher.fetchFor(chain(pki.leaf));
  assert.deepEqual(r.missing, []);
  assert.equal(r.complete, true);
  assert.equal(r.crlsDer.length, 2);
  assert.equal(hits.get('/int.crl'), 1);
  assert.equal(hits.get('/root.crl'), 1);
  // The exact CRLs served (the PEM one as DER), leaf's issuer first, and enough for openssl to check the chain.
  assert.deepEqual(r.crlsDer, [served.int, served.root]);
  const f = (n: string) => join(dir, n);
  await writeFile(f('got.crls.pem'), r.crlsDer.map((d) => derToPem(d, 'X509 CRL')).join(''));
  const ok = await run('openssl', [
    'verify', '-crl_check_all', '-CRLfile', f('got.crls.pem'), '-CAfile', f('root.crt'),
    '-untrusted', f('int.crt'), '-attime', String(Math.floor(clock.now() / 1000)), f('leaf.crt'),
  ]); // prettier-ignore
  assert.equal(ok.code, 0, ok.stderr + ok.stdout);

  // A redirect to the same CRL is followed (and the redirected URL cached under its own name).
  const moved = await fetcher.fetchFor(chain(pki.moved));
  assert.equal(moved.complete, true, JSON.stringify(moved.missing));
  assert.equal(hits.get('/moved.crl'), 1);
});

test('a certificate without a CRL distribution point is missing, the rest still comes', async (t) => {
  const fetcher = await setup(t);
  const r = await fetcher.fetchFor(chain(pki.noCdp));
  assert.equal(r.complete, false);
  assert.deepEqual(r.missing, [{ subject: 'CN=No CDP', reason: 'no CRL distribution point' }]);
  assert.equal(r.crlsDer.length, 1);
});

test('an http error is a missing reason naming the status and URL', async (t) => {
  const fetcher = await setup(t);
  const r = await fetcher.fetchFor(chain(pki.gone));
  assert.equal(r.complete, false);
  assert.deepEqual(r.missing, [{ subject: 'CN=Gone', reason: `http 404 from ${base}/missing.crl` }]);
});

test('an expired CRL is refused; a cached one is dropped once the clock passes its nextUpdate', async (t) => {
  const fetcher = await setup(t);
  assert.equal((await fetcher.fetchFor(chain(pki.leaf))).complete, true);
  clock.advance(25 * HOUR); // past nextUpdate of both CRLs
  t.after(() => clock.advance(-25 * HOUR));
  const r = await fetcher.fetchFor(chain(pki.leaf));
  assert.equal(r.complete, false);
  assert.deepEqual(
    r.missing.map((m) => m.reason),
    ['CRL expired', 'CRL expired'],
  );
  assert.equal(hits.get('/int.crl'), 2, 'the stale cache entry is not used; the CRL is fetched again');
  assert.deepEqual(r.crlsDer, []);
});

test('a CRL not yet valid and a CRL without nextUpdate are refused', async (t) => {
  const fetcher = await setup(t);
  const { int } = pki;
  const future = await makeCrl({ issuer: int.cert, signingKey: int.key, thisUpdate: new Date(clock.now() + HOUR) });
  routes.set('/int.crl', { status: 200, body: future });
  assert.equal((await fetcher.fetchFor(chain(pki.leaf))).missing[0]?.reason, 'CRL not yet valid');
  const open = await makeCrl({ issuer: int.cert, signingKey: int.key, thisUpdate: new Date(clock.now() - HOUR) });
  routes.set('/int.crl', { status: 200, body: open });
  assert.equal((await fetcher.fetchFor(chain(pki.leaf))).missing[0]?.reason, 'CRL has no nextUpdate');
  // A minute ahead is an issuer's clock running fast, not a CRL from the future: accepted.
  const skewed = await makeCrl({
    issuer: int.cert,
    signingKey: int.key,
    thisUpdate: new Date(clock.now() + 60_000),
    nextUpdate: new Date(clock.now() + HOUR),
  });
  routes.set('/int.crl', { status: 200, body: skewed });
  assert.ok(
    !(await fetcher.fetchFor(chain(pki.leaf))).missing.some((m) => m.reason === 'CRL not yet valid'),
    'a minute of clock skew is tolerated',
  );
});

test('a CRL in the issuer’s name but signed by another key is refused', async (t) => {
  const fetcher = await setup(t);
  const forged = await makeCrl({
    issuer: pki.int.cert,
    signingKey: await rogueKey(),
    thisUpdate: new Date(clock.now() - HOUR),
    nextUpdate: new Date(clock.now() + HOUR),
  });
  routes.set('/int.crl', { status: 200, body: forged });
  const r = await fetcher.fetchFor(chain(pki.leaf));
  assert.deepEqual(r.missing, [{ subject: 'CN=Foreign Seal', reason: 'CRL signature invalid' }]);
  assert.equal(r.crlsDer.length, 1, 'the root CRL for the intermediate is still good');
  // A forged CRL is not cached: the next call asks again.
  await fetcher.fetchFor(chain(pki.leaf));
  assert.equal(hits.get('/int.crl'), 2);
});

test('a CRL from another issuer, and a body that is no CRL, are refused', async (t) => {
  const fetcher = await setup(t);
  const window = { lastUpdate: new Date(clock.now() - HOUR), nextUpdate: new Date(clock.now() + HOUR) };
  routes.set('/elsewhere.crl', { status: 200, body: await opensslCrl(dir, 'root', window) });
  const r = await fetcher.fetchFor(chain(pki.elsewhere));
  assert.match(r.missing[0]!.reason, /is issued by CN=Foreign Root, not CN=Foreign Intermediate/);
  routes.set('/elsewhere.crl', { status: 200, body: '<html>hello</html>' });
  const junk = await fetcher.fetchFor(chain(pki.elsewhere));
  assert.equal(junk.missing[0]!.reason, `CRL from ${base}/elsewhere.crl does not parse`);
});

test('a revoked leaf is missing with "certificate revoked"', async (t) => {
  const fetcher = await setup(t);
  const r = await fetcher.fetchFor(chain(pki.revoked));
  assert.equal(r.complete, false);
  assert.deepEqual(r.missing, [{ subject: 'CN=Revoked', reason: 'certificate revoked' }]);
  // The same CRL clears the other leaf.
  assert.equal((await fetcher.fetchFor(chain(pki.leaf))).complete, true);
});

test('private addresses are refused unless allowed, and nothing reaches the server', async (t) => {
  const fetcher = await setup(t, { allowPrivateNetwork: false });
  const r = await fetcher.fetchFor(chain(pki.leaf));
  assert.equal(r.complete, false);
  assert.equal(r.missing.length, 2);
  for (const m of r.missing) assert.match(m.reason, /^refused address: address 127\.0\.0\.1 is not a public address/);
  assert.equal(hits.size, 0);
});

test('verified CRLs are cached: repeated and concurrent calls fetch each URL once', async (t) => {
  const fetcher = await setup(t);
  const [a, b] = await Promise.all([fetcher.fetchFor(chain(pki.leaf)), fetcher.fetchFor(chain(pki.leaf))]);
  const c = await fetcher.fetchFor(chain(pki.leaf));
  for (const r of [a, b, c]) assert.equal(r.complete, true);
  assert.equal(hits.get('/int.crl'), 1);
  assert.equal(hits.get('/root.crl'), 1);
  // Still cached just before nextUpdate.
  clock.advance(23 * HOUR);
  t.after(() => clock.advance(-23 * HOUR));
  assert.equal((await fetcher.fetchFor(chain(pki.leaf))).complete, true);
  assert.equal(hits.get('/int.crl'), 1);
});

test('a body over the size limit is refused, with or without a content-length', async (t) => {
  const fetcher = await setup(t, { maxBytes: 4096 });
  const huge = new Uint8Array(10_000).fill(0x30);
  routes.set('/big.crl', { status: 200, body: huge });
  const declared = await fetcher.fetchFor(chain(pki.big));
  assert.equal(declared.missing[0]!.reason, `CRL from ${base}/big.crl is larger than 4096 bytes`);
  routes.set('/big.crl', { status: 200, body: huge, chunked: true });
  const streamed = await fetcher.fetchFor(chain(pki.big));
  assert.equal(streamed.missing[0]!.reason, `CRL from ${base}/big.crl is larger than 4096 bytes`);
});

test('too many redirects, an issuer outside the chain and unparseable input are reasons, not errors', async (t) => {
  const fetcher = await setup(t);
  routes.set('/big.crl', { status: 302, location: '/big.crl' });
  const loop = await fetcher.fetchFor(chain(pki.big));
  assert.equal(loop.missing[0]!.reason, `more than 3 redirects from ${base}/big.crl`);
  assert.equal(hits.get('/big.crl'), 4);

  const orphan = await fetcher.fetchFor([pki.leaf.der]);
  assert.deepEqual(orphan.missing, [{ subject: 'CN=Foreign Seal', reason: 'issuer certificate not in the chain' }]);
  const junk = await fetcher.fetchFor([new Uint8Array([1, 2, 3]), pki.root.der]);
  assert.deepEqual(junk.missing, [{ subject: 'certificate 1 of the chain', reason: 'certificate does not parse' }]);
  const none = await fetcher.fetchFor([]);
  assert.equal(none.complete, false);
  // A self-signed root alone needs no CRL.
  assert.deepEqual(await fetcher.fetchFor([pki.root.der]), { crlsDer: [], complete: true, missing: [] });
});

test('a server that never answers is a reason once the deadline passes', async (t) => {
  // The deadline is the network's real time (undici), not the domain clock; 100 ms keeps the wait short.
  const fetcher = await setup(t, { timeoutMs: 100 });
  routes.set('/big.crl', { status: 200, hang: true });
  const r = await fetcher.fetchFor(chain(pki.big));
  assert.deepEqual(r.missing, [{ subject: 'CN=Big', reason: `timed out fetching ${base}/big.crl` }]);
});
