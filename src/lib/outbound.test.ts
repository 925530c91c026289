import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { request } from 'undici';
import {
  RefusedAddressError,
  checkOutboundSyntax,
  checkOutboundUrl,
  createGuardedAgent,
  guardConnector,
  guardLookup,
  isPublicAddress,
} from './outbound.js';

const syntax: Array<[raw: string, ok: boolean]> = [
  ['https://example.com/hook', true],
  ['http://example.com:8080/x?y=1#z', true],
  ['HTTPS://EXAMPLE.COM/', true],
  ['http://[2606:4700::1111]/', true],
  ['https://example.com/' + 'a'.repeat(2048 - 'https://example.com/'.length), true],
  ['https://example.com/' + 'a'.repeat(2049 - 'https://example.com/'.length), false],
  ['https://example.com/' + 'a'.repeat(100_000), false],
  ['https://example.com/' + 'é'.repeat(1000), false], // short raw, but percent-encoding takes it past the limit
  ['ftp://example.com/file', false],
  ['file:///etc/passwd', false],
  ['javascript:alert(1)', false],
  ['data:text/plain,hi', false],
  ['ws://example.com/', false],
  ['http://u:p@example.com/', false],
  ['http://u@example.com/', false],
  ['http://:p@example.com/', false],
  ['/relative/path', false],
  ['example.com/hook', false],
  ['http://', false],
  ['https://exa mple.com/', false],
  ['', false],
];

for (const [raw, ok] of syntax) {
  const label = raw.length > 60 ? `${raw.slice(0, 40)}… (${raw.length} chars)` : raw;
  test(`checkOutboundSyntax ${JSON.stringify(label)} -> ${ok ? 'ok' : 'refused'}`, () => {
    const r = checkOutboundSyntax(raw);
    assert.equal(r.ok, ok, r.ok ? 'accepted' : r.reason);
    if (r.ok) assert.ok(r.url instanceof URL, 'r.url instanceof URL');
  });
}

const addresses: Array<[address: string, isPublic: boolean]> = [
  ['8.8.8.8', true],
  ['93.184.215.14', true],
  ['172.15.255.255', true],
  ['172.32.0.1', true],
  ['100.63.255.255', true],
  ['100.128.0.1', true],
  ['223.255.255.255', true],
  ['2606:4700::1111', true],
  ['2a00:1450:4001::1', true],
  ['::ffff:8.8.8.8', true],
  ['64:ff9b::808:808', true], // NAT64 of a public address
  ['2002:808:808::1', true], // 6to4 of a public address
  ['0.0.0.0', false],
  ['0.1.2.3', false],
  ['10.0.0.1', false],
  ['100.64.0.1', false],
  ['100.127.255.255', false],
  ['127.0.0.1', false],
  ['127.255.255.254', false],
  ['169.254.169.254', false],
  ['172.16.0.1', false],
  ['172.31.255.255', false],
  ['192.0.0.8', false],
  ['192.0.2.1', false],
  ['192.88.99.1', false],
  ['192.168.1.1', false],
  ['198.18.0.1', false],
  ['198.51.100.1', false],
  ['203.0.113.1', false],
  ['224.0.0.1', false],
  ['239.255.255.250', false],
  ['240.0.0.1', false],
  ['255.255.255.255', false],
  ['::', false],
  ['::1', false],
  ['::127.0.0.1', false], // deprecated IPv4-compatible
  ['::ffff:127.0.0.1', false],
  ['::ffff:10.0.0.1', false],
  ['::ffff:169.254.169.254', false],
  ['64:ff9b::a9fe:a9fe', false], // NAT64 of the metadata address
  ['64:ff9b:1::1', false], // local-use NAT64
  ['2002:7f00:1::', false], // 6to4 of loopback
  ['2002:a00:1::', false],
  ['100::1', false], // discard-only
  ['2001::1', false], // Teredo
  ['2001:10::1', false], // ORCHID
  ['2001:db8::1', false],
  ['3fff::1', false],
  ['fc00::1', false],
  ['fd12:3456::1', false],
  ['fe80::1', false],
  ['febf::1', false],
  ['fec0::1', false],
  ['ff02::1', false],
  ['fe80::1%eth0', false],
  ['garbage', false],
  ['', false],
];

for (const [address, isPublic] of addresses) {
  test(`isPublicAddress ${address || '""'} -> ${isPublic}`, () => {
    assert.equal(isPublicAddress(address), isPublic);
  });
}

// IP-literal hosts need no DNS, so these run offline. WHATWG URL turns the odd IPv4 spellings into dotted quads.
const literalUrls: Array<[url: string, ok: boolean]> = [
  ['http://127.0.0.1/', false],
  ['http://0177.0.0.1/', false],
  ['http://0x7f.1/', false],
  ['http://2130706433/', false],
  ['http://127.1/', false],
  ['http://[::1]/', false],
  ['http://[::ffff:127.0.0.1]/', false],
  ['http://[::ffff:7f00:1]/', false],
  ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', false],
  ['http://10.0.0.1:8080/hook', false],
  ['https://169.254.169.254/latest/meta-data/', false],
  ['http://0.0.0.0/', false],
  ['http://[::]/', false],
  ['http://[fe80::1]/', false],
  ['http://[fd00::1]/', false],
  ['http://224.0.0.1/', false],
  ['http://255.255.255.255/', false],
  ['http://8.8.8.8/', true],
  ['https://[2606:4700::1111]/hook', true],
  ['https://[::ffff:8.8.8.8]/hook', true],
];

for (const [url, ok] of literalUrls) {
  test(`checkOutboundUrl ${url} -> ${ok ? 'ok' : 'refused'}; allowed with allowPrivateNetwork`, async () => {
    const noDns = async () => assert.fail('literal hosts must not be resolved');
    assert.equal((await checkOutboundUrl(url, { allowPrivateNetwork: false, resolve: noDns })).ok, ok);
    assert.equal((await checkOutboundUrl(url, { allowPrivateNetwork: true, resolve: noDns })).ok, true);
  });
}

test('checkOutboundUrl refuses http://localhost/ (resolves to loopback) unless private networks are allowed', async () => {
  const r = await checkOutboundUrl('http://localhost/', { allowPrivateNetwork: false });
  assert.ok(!r.ok && /not a public address/.test(r.reason), JSON.stringify(r));
  assert.equal((await checkOutboundUrl('http://localhost/', { allowPrivateNetwork: true })).ok, true);
});

test('checkOutboundUrl still applies the syntax rule when private networks are allowed', async () => {
  assert.equal((await checkOutboundUrl('ftp://localhost/', { allowPrivateNetwork: true })).ok, false);
  assert.equal((await checkOutboundUrl('http://u:p@localhost/', { allowPrivateNetwork: true })).ok, false);
});

const resolved: Array<[label: string, answer: string[] | Error, ok: boolean]> = [
  ['all public', ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'], true],
  ['one private among public', ['93.184.215.14', '10.0.0.1'], false],
  ['private last of many', ['8.8.8.8', '8.8.4.4', '2001:4860:4860::8888', 'fd00::1'], false],
  ['mapped loopback', ['::ffff:127.0.0.1'], false],
  ['no addresses', [], false],
  ['lookup fails', new Error('ENOTFOUND'), false],
];

for (const [label, answer, ok] of resolved) {
  test(`checkOutboundUrl with DNS answer: ${label} -> ${ok ? 'ok' : 'refused'}`, async () => {
    const resolve = async (host: string) => {
      assert.equal(host, 'hooks.example.com');
      if (answer instanceof Error) throw answer;
      return answer;
    };
    const r = await checkOutboundUrl('https://hooks.example.com/in', { allowPrivateNetwork: false, resolve });
    assert.equal(r.ok, ok, r.ok ? 'accepted' : r.reason);
  });
}

type Answer = { address: string; family: number };
const fakeLookup =
  (answers: Answer[]) =>
  (
    _host: string,
    options: { all?: boolean },
    cb: (err: Error | null, address: string | Answer[], family?: number) => void,
  ) => (options.all ? cb(null, answers) : cb(null, answers[0]!.address, answers[0]!.family));

const lookupOnce = (fn: ReturnType<typeof guardLookup>, all: boolean) =>
  new Promise<{ err: Error | null; address: unknown }>((resolve) =>
    fn('svc.example', { all }, (err, address) => resolve({ err, address })),
  );

test('guardLookup refuses a non-public answer in single and all modes, passes public ones', async () => {
  const mixed = [
    { address: '93.184.215.14', family: 4 },
    { address: '192.168.0.10', family: 4 },
  ];
  for (const all of [false, true]) {
    const pub = await lookupOnce(guardLookup(false, fakeLookup([{ address: '8.8.8.8', family: 4 }]) as never), all);
    assert.equal(pub.err, null);
    const priv = await lookupOnce(guardLookup(false, fakeLookup([{ address: '127.0.0.1', family: 4 }]) as never), all);
    assert.ok(priv.err instanceof RefusedAddressError, 'priv.err instanceof RefusedAddressError');
    assert.match(priv.err.message, /refused address 127\.0\.0\.1/);
    const allowed = await lookupOnce(
      guardLookup(true, fakeLookup([{ address: '127.0.0.1', family: 4 }]) as never),
      all,
    );
    assert.equal(allowed.err, null);
  }
  const m = await lookupOnce(guardLookup(false, fakeLookup(mixed) as never), true);
  assert.match(String(m.err?.message), /refused address 192\.168\.0\.10/);
});

test('guardConnector refuses a socket whose peer turns out to be private, and destroys it', async () => {
  let destroyed = false;
  const fakeSocket = { remoteAddress: '10.0.0.7', destroy: () => (destroyed = true) } as unknown as Socket;
  const connector = guardConnector(false, (_opts, cb) => cb(null, fakeSocket));
  const err = await new Promise<Error | null>((resolve) =>
    connector({ hostname: 'example.com', protocol: 'http:', port: '80' }, (...args) => resolve(args[0])),
  );
  assert.ok(err instanceof RefusedAddressError, 'err instanceof RefusedAddressError');
  assert.match(err.message, /refused address 10\.0\.0\.7/);
  assert.equal(destroyed, true);
});

test('guardConnector refuses private IP-literal hosts before connecting', async () => {
  let called = false;
  const connector = guardConnector(false, () => (called = true));
  for (const hostname of ['127.0.0.1', '[::1]', '::ffff:7f00:1']) {
    const err = await new Promise<Error | null>((resolve) =>
      connector({ hostname, protocol: 'http:', port: '80' }, (...args) => resolve(args[0])),
    );
    assert.match(String(err?.message), /refused address/);
  }
  assert.equal(called, false);
});

// A real server on loopback: the guarded agent must not reach it unless private networks are allowed.
let server: http.Server;
let port = 0;
let connections = 0;
before(async () => {
  server = http.createServer((_req, res) => res.end('pong'));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('guarded agent (private refused) cannot reach a loopback server by literal, mapped literal or name', async () => {
  const agent = createGuardedAgent({ allowPrivateNetwork: false });
  const before = connections;
  try {
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://localhost:${port}/`,
    ]) {
      await assert.rejects(request(url, { dispatcher: agent }), /refused address/, url);
    }
    assert.equal(connections, before, 'no TCP connection reached the server');
  } finally {
    await agent.close();
  }
});

test('guarded agent (private allowed) reaches the loopback server and keeps the connection alive', async () => {
  const agent = createGuardedAgent({ allowPrivateNetwork: true, connections: 4 });
  const before = connections;
  try {
    const requests = 5;
    for (let i = 0; i < requests; i++) {
      const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'pong');
      // undici frees the connection a tick after the body ends; without the pause the pool may open another.
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(
      connections - before < requests,
      `connections were reused (${connections - before} for ${requests} requests)`,
    );
  } finally {
    await agent.close();
  }
});
