import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { ConfigError, loadConfig } from '../config.js';
import { setAllowedIps } from '../keys/keys.repo.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { clientAddressResolver } from './trusted-proxies.js';

const req = (peer: string, xff?: string | string[]) =>
  ({
    socket: { remoteAddress: peer },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  }) as never as FastifyRequest;

describe('trusted proxies: the resolver', () => {
  const resolve = clientAddressResolver(['10.0.0.0/8', '192.0.2.1']);

  test('without trusted proxies the header is never read', () => {
    assert.equal(clientAddressResolver([])(req('198.51.100.9', '203.0.113.7')), '198.51.100.9');
  });

  test('an untrusted peer is the client whatever it forwards', () => {
    assert.equal(resolve(req('198.51.100.9', '203.0.113.7')), '198.51.100.9');
  });

  test('the rightmost untrusted hop is the client', () => {
    assert.equal(resolve(req('10.1.2.3', '203.0.113.7')), '203.0.113.7');
    assert.equal(resolve(req('10.1.2.3', '203.0.113.7, 192.0.2.1')), '203.0.113.7');
    // The caller wrote the leftmost entry itself: it is ignored because 198.51.100.1 is not a trusted proxy.
    assert.equal(resolve(req('10.1.2.3', '203.0.113.7, 198.51.100.1')), '198.51.100.1');
    assert.equal(resolve(req('10.1.2.3', ['203.0.113.7', '2001:db8::1'])), '2001:db8::1');
  });

  test('all hops trusted: the leftmost; no header: the proxy itself', () => {
    assert.equal(resolve(req('10.1.2.3', '10.9.9.9, 192.0.2.1')), '10.9.9.9');
    assert.equal(resolve(req('10.1.2.3')), '10.1.2.3');
  });

  test('a hop that is not an address ends the walk at the proxy that reported it', () => {
    assert.equal(resolve(req('10.1.2.3', 'junk')), '10.1.2.3');
    assert.equal(resolve(req('10.1.2.3', '203.0.113.7, 192.0.2.1:8080')), '10.1.2.3');
    assert.equal(resolve(req('10.1.2.3', 'junk, 192.0.2.1')), '192.0.2.1');
    assert.equal(resolve(req('10.1.2.3', '')), '10.1.2.3');
  });
});

test('TRUST_PROXY: addresses and CIDR blocks, canonical; anything else refuses to start', () => {
  const base = { DATA_DIR: '/tmp/signet-config-test' };
  assert.deepEqual(loadConfig(base).trustProxy, []);
  assert.deepEqual(loadConfig({ ...base, TRUST_PROXY: ' 10.0.0.0/8 , 127.0.0.1,::1 ' }).trustProxy, [
    '10.0.0.0/8',
    '127.0.0.1',
    '::1',
  ]);
  for (const bad of ['*', 'loopback', '10.0.0.0/33', 'proxy.example.com', '10.0.0.1:80']) {
    assert.throws(() => loadConfig({ ...base, TRUST_PROXY: bad }), ConfigError, bad);
  }
});

describe('trusted proxies: the /v1 gate, last-used and key-use audit behind a proxy', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: { TRUST_PROXY: '127.0.0.5,127.0.0.6' } });
  });
  after(() => h.close());

  test('the allowlist sees the forwarded client only when the peer is trusted', async () => {
    const t = await h.tenant();
    await setAllowedIps(h.db.kysely, t.keyId, ['203.0.113.7']);
    const from = (localAddress: string, xff?: string) =>
      h.request('GET', '/v1/hooks', {
        token: t.token,
        localAddress,
        headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
      });
    assert.equal((await from('127.0.0.5', '203.0.113.7')).status, 200);
    assert.equal((await from('127.0.0.5', '203.0.113.7, 127.0.0.6')).status, 200);
    // Same keep-alive connection, another forwarded client: refused with that client's address.
    const other = await from('127.0.0.5', '203.0.113.8');
    assert.equal(other.status, 403);
    assert.deepEqual(other.json, { error: other.json.error, code: 'ip_not_allowed', ip: '203.0.113.8' });
    assert.equal((await from('127.0.0.5', '203.0.113.7, 198.51.100.1')).json.ip, '198.51.100.1');
    assert.equal((await from('127.0.0.5', 'junk')).json.ip, '127.0.0.5');
    assert.equal((await from('127.0.0.5')).json.ip, '127.0.0.5');
    // An untrusted peer cannot borrow an allowed address.
    const spoof = await from('127.0.0.3', '203.0.113.7');
    assert.equal(spoof.status, 403);
    assert.equal(spoof.json.ip, '127.0.0.3');
  });

  test('last-used and the key-use audit record the forwarded client, masked', async () => {
    const t = await h.tenant();
    const r = await h.request('GET', '/v1/hooks', {
      token: t.token,
      localAddress: '127.0.0.6',
      headers: { 'x-forwarded-for': '198.51.100.23' },
    });
    assert.equal(r.status, 200);
    await h.app.flushLastUsed();
    await h.app.flushKeyUses();
    const key = await h.db.kysely
      .selectFrom('api_keys')
      .select('last_used_ip')
      .where('id', '=', t.keyId)
      .executeTakeFirstOrThrow();
    assert.equal(key.last_used_ip, '198.51.100.x');
    const uses = await h.db.kysely.selectFrom('key_uses').select('ip_masked').where('key_id', '=', t.keyId).execute();
    assert.deepEqual(
      uses.map((u) => u.ip_masked),
      ['198.51.100.x'],
    );
  });
});
