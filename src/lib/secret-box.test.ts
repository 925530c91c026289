// The cipher of secrets at rest: what it writes, what it refuses to open, and what an open costs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  decryptSecret,
  encryptSecret,
  isCurrent,
  keyIdOf,
  keyringOf,
  SecretKeyError,
  storedKeyId,
} from './secret-box.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const secret = `whsec_${randomBytes(32).toString('base64url')}`;

test('enc:v1:<key id>:<base64>, a fresh nonce each time, opened only for the same purpose and identity', () => {
  const ring = keyringOf(k1);
  const a = encryptSecret(ring, 'hook-secret', 'hook_1', secret);
  const b = encryptSecret(ring, 'hook-secret', 'hook_1', secret);
  assert.match(a, /^enc:v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*$/);
  assert.equal(storedKeyId(a), keyIdOf(k1));
  assert.notEqual(a, b, 'random nonce');
  assert.ok(!a.includes(secret) && !a.includes(k1.toString('base64')), 'neither the value nor the key shows');
  assert.equal(decryptSecret(ring, 'hook-secret', 'hook_1', a), secret);
  assert.ok(isCurrent(ring, a), 'written under the primary key');
  // Moved to another row, or read as another purpose's value: refused.
  assert.throws(() => decryptSecret(ring, 'hook-secret', 'hook_2', a), SecretKeyError);
  assert.throws(() => decryptSecret(ring, 'pki-key', 'hook_1', a), SecretKeyError);
  // Altered.
  const raw = Buffer.from(a.slice(a.lastIndexOf(':') + 1), 'base64');
  raw[20] = raw[20]! ^ 1;
  const altered = `${a.slice(0, a.lastIndexOf(':') + 1)}${raw.toString('base64')}`;
  assert.throws(() => decryptSecret(ring, 'hook-secret', 'hook_1', altered), /does not authenticate/);
});

test('a plain value passes through; a value under a key the ring lacks names that key id', () => {
  assert.equal(decryptSecret(keyringOf(k1), 'hook-secret', 'hook_1', secret), secret);
  assert.equal(decryptSecret(null, 'hook-secret', 'hook_1', secret), secret);
  const under2 = encryptSecret(keyringOf(k2), 'hook-secret', 'hook_1', secret);
  assert.throws(
    () => decryptSecret(keyringOf(k1), 'hook-secret', 'hook_1', under2),
    new RegExp(`key id ${keyIdOf(k2)}, which is not the configured key`),
  );
  assert.throws(() => decryptSecret(null, 'hook-secret', 'hook_1', under2), SecretKeyError);
  // A rotation's ring opens both and writes under the new key.
  const rotating = keyringOf(k1, [k2]);
  assert.equal(decryptSecret(rotating, 'hook-secret', 'hook_1', under2), secret);
  assert.ok(!isCurrent(rotating, under2), 'under the previous key: to be rewritten');
  assert.ok(isCurrent(rotating, encryptSecret(rotating, 'hook-secret', 'hook_1', secret)), 'written under the new');
});

test('opening a short value costs microseconds (keys are derived once per keyring, not per value)', () => {
  const ring = keyringOf(k1);
  const stored = encryptSecret(ring, 'hook-secret', 'hook_1', secret);
  for (let i = 0; i < 200; i++) decryptSecret(ring, 'hook-secret', 'hook_1', stored);
  const n = 5000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) decryptSecret(ring, 'hook-secret', 'hook_1', stored);
  const us = ((performance.now() - t0) * 1000) / n;
  console.log(`# AES-256-GCM open of a ${secret.length}-character hook secret: ${us.toFixed(2)} µs`);
  assert.ok(us < 100, `${us} µs per open`);
});
