import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from './config.js';

test('defaults: port 3000, dual-stack host, SQLite in ./data, base URL on the port', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3000);
  assert.equal(c.host, '::');
  assert.equal(c.baseUrl, 'http://localhost:3000');
  assert.equal(c.aliasBaseUrl, null);
  assert.equal(c.dataDir, path.resolve('./data'));
  assert.equal(c.databaseUrl, `sqlite:${path.resolve('./data/signet.db')}`);
  assert.equal(c.redisUrl, null);
  assert.equal(c.allowPrivateNetwork, false);
  assert.deepEqual(c.tierCaps, { starter: 50, business: 1000 });
});

test('explicit values are honoured', () => {
  const c = loadConfig({
    PORT: '8080',
    HOST: '127.0.0.1',
    BASE_URL: 'https://sign.example.com/',
    ALIAS_BASE_URL: 'https://esign.example.org',
    DATA_DIR: '/tmp/x',
    DATABASE_URL: 'postgres://u:p@db:5432/signet',
    REDIS_URL: 'redis://cache:6379',
    SIGNET_ALLOW_PRIVATE_NETWORK: '1',
    SIGNET_TIER_CAPS: 'starter=10',
  });
  assert.equal(c.baseUrl, 'https://sign.example.com');
  assert.equal(c.aliasBaseUrl, 'https://esign.example.org');
  assert.equal(c.databaseUrl, 'postgres://u:p@db:5432/signet');
  assert.equal(c.redisUrl, 'redis://cache:6379');
  assert.equal(c.allowPrivateNetwork, true);
  assert.equal(c.tierCaps.starter, 10);
  assert.equal(c.baseUrl, 'https://sign.example.com');
});

test('a bad value stops start-up with one line naming the variable, never echoing a password', () => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /^PORT /],
    [{ PORT: '70000' }, /^PORT /],
    [{ BASE_URL: 'localhost:3000' }, /^BASE_URL /],
    [{ BASE_URL: 'ftp://x' }, /^BASE_URL /],
    [{ ALIAS_BASE_URL: '::' }, /^ALIAS_BASE_URL /],
    [{ DATABASE_URL: 'mysql://u:secretpw@h/db' }, /^DATABASE_URL /],
    [{ REDIS_URL: 'http://cache' }, /^REDIS_URL /],
    [{ SIGNET_ALLOW_PRIVATE_NETWORK: 'maybe' }, /^SIGNET_ALLOW_PRIVATE_NETWORK /],
    [{ SIGNET_TIER_CAPS: 'gold=5' }, /^SIGNET_TIER_CAPS /],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL /],
  ];
  for (const [env, re] of bad) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, re);
        assert.ok(!e.message.includes('\n'));
        assert.ok(!e.message.includes('secretpw'));
        return true;
      },
    );
  }
});
