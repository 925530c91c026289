import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, INTEGER_RANGES, loadConfig, poolSizeFor } from './config.js';
import { FILE_BODY_LIMIT, PRUNE_BATCH_ROWS, RETENTION_DEFAULTS } from './limits.js';

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
  assert.equal(c.region, null);
  assert.equal(c.reviewStaging, true);
});

test('SIGNET_REGION is a short label; SIGNET_REVIEW_STAGING is 1 or 0; an alias may have a path', () => {
  assert.equal(loadConfig({ SIGNET_REGION: 'eu-central' }).region, 'eu-central');
  assert.equal(loadConfig({ SIGNET_REGION: 'a'.repeat(32) }).region, 'a'.repeat(32));
  assert.equal(loadConfig({ SIGNET_REVIEW_STAGING: '0' }).reviewStaging, false);
  assert.equal(loadConfig({ SIGNET_REVIEW_STAGING: '1' }).reviewStaging, true);
  assert.equal(
    loadConfig({ ALIAS_BASE_URL: 'https://legacy.example.com/esign/' }).aliasBaseUrl,
    'https://legacy.example.com/esign',
  );
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
    [{ ALIAS_BASE_URL: 'https://legacy.example.com/v1' }, /^ALIAS_BASE_URL/],
    [{ ALIAS_BASE_URL: 'https://legacy.example.com/esign?x=1' }, /^ALIAS_BASE_URL /],
    [{ SIGNET_REGION: 'EU-Central' }, /^SIGNET_REGION /],
    [{ SIGNET_REGION: 'eu central' }, /^SIGNET_REGION /],
    [{ SIGNET_REGION: 'a'.repeat(33) }, /^SIGNET_REGION /],
    [{ SIGNET_REGION: 'eu_central' }, /^SIGNET_REGION /],
    [{ SIGNET_REVIEW_STAGING: 'off' }, /^SIGNET_REVIEW_STAGING /],
    [{ SIGNET_REVIEW_STAGING: 'true' }, /^SIGNET_REVIEW_STAGING /],
    [{ DATABASE_URL: 'mysql://u:secretpw@h/db' }, /^DATABASE_URL /],
    [{ REDIS_URL: 'http://cache' }, /^REDIS_URL /],
    [{ SIGNET_ALLOW_PRIVATE_NETWORK: 'maybe' }, /^SIGNET_ALLOW_PRIVATE_NETWORK /],
    [{ SIGNET_TIER_CAPS: 'gold=5' }, /^SIGNET_TIER_CAPS /],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL /],
    [{ MAIL_FROM: 'Signet <no-reply@example.com>' }, /^MAIL_FROM /],
    // Fit for a From header (lib/email.ts): a comma would split it.
    [{ MAIL_FROM: 'ops,team@example.com' }, /^MAIL_FROM /],
  ];
  for (const [env, re] of bad) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, 'e instanceof ConfigError');
        assert.match(e.message, re);
        assert.ok(!e.message.includes('\n'), "!e.message.includes('\\n')");
        assert.ok(!e.message.includes('secretpw'), "!e.message.includes('secretpw')");
        return true;
      },
    );
  }
});

test('process limits: defaults from limits.ts, each variable honoured, and a file body fits its timeout at 2 Mbit/s', () => {
  const d = loadConfig({}).limits;
  assert.deepEqual(d, {
    requestTimeoutMs: 30_000,
    uploadTimeoutMs: 180_000,
    headersTimeoutMs: 10_000,
    keepAliveTimeoutMs: 10_000,
    idleSocketTimeoutMs: 120_000,
    maxBodiesInFlightBytes: 4 * FILE_BODY_LIMIT,
    publicRateLimit: 120,
  });
  // The largest body a file route takes, at 2 Mbit/s, arrives within the upload timeout.
  const secondsAt2Mbit = (FILE_BODY_LIMIT * 8) / 2_000_000;
  assert.ok(secondsAt2Mbit * 1000 < d.uploadTimeoutMs, `${secondsAt2Mbit} s`);

  const c = loadConfig({
    REQUEST_TIMEOUT_MS: '5000',
    UPLOAD_TIMEOUT_MS: '600000',
    HEADERS_TIMEOUT_MS: '2000',
    KEEP_ALIVE_TIMEOUT_MS: '75000',
    IDLE_SOCKET_TIMEOUT_MS: '300000',
    MAX_BODIES_IN_FLIGHT_BYTES: String(2 * FILE_BODY_LIMIT),
    PUBLIC_RATE_LIMIT: '30',
  }).limits;
  assert.deepEqual(c, {
    requestTimeoutMs: 5000,
    uploadTimeoutMs: 600_000,
    headersTimeoutMs: 2000,
    keepAliveTimeoutMs: 75_000,
    idleSocketTimeoutMs: 300_000,
    maxBodiesInFlightBytes: 2 * FILE_BODY_LIMIT,
    publicRateLimit: 30,
  });

  for (const [env, re] of [
    [{ REQUEST_TIMEOUT_MS: '10s' }, /^REQUEST_TIMEOUT_MS /],
    [{ HEADERS_TIMEOUT_MS: '0' }, /^HEADERS_TIMEOUT_MS /],
    [{ REQUEST_TIMEOUT_MS: '60000', UPLOAD_TIMEOUT_MS: '30000' }, /^UPLOAD_TIMEOUT_MS /],
    // Below one largest body, no upload could ever be admitted.
    [{ MAX_BODIES_IN_FLIGHT_BYTES: String(FILE_BODY_LIMIT - 1) }, /^MAX_BODIES_IN_FLIGHT_BYTES /],
    [{ PUBLIC_RATE_LIMIT: '-1' }, /^PUBLIC_RATE_LIMIT /],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && re.test(e.message),
    );
  }
});

test('qualified signatures: all four QES_* variables or none; a partial set names what is missing', () => {
  assert.equal(loadConfig({}).qes, null);
  const all = {
    QES_PROVIDER_URL: 'https://qtsp.example/csc/v2/',
    QES_CLIENT_ID: 'signet',
    QES_CLIENT_SECRET: 's3cret',
    QES_CA_FILE: 'qtsp.pem',
  };
  const c = loadConfig(all).qes!;
  assert.equal(c.providerUrl, 'https://qtsp.example/csc/v2');
  assert.equal(c.caFile, path.resolve('qtsp.pem'));
  assert.equal(c.authorizeUrl, null);
  assert.throws(
    () => loadConfig({ QES_PROVIDER_URL: all.QES_PROVIDER_URL }),
    (e: Error) => e instanceof ConfigError && /missing: QES_CLIENT_ID, QES_CLIENT_SECRET, QES_CA_FILE$/.test(e.message),
  );
  assert.throws(() => loadConfig({ QES_TOKEN_URL: 'https://qtsp.example/token' }), ConfigError);
  assert.throws(() => loadConfig({ ...all, QES_PROVIDER_URL: 'ftp://qtsp.example' }), /QES_PROVIDER_URL must use/);
});

test('PostgreSQL pool: two connections per core, at least 4; DATABASE_POOL_MAX overrides; 0 or a word refused', () => {
  assert.deepEqual([1, 2, 4, 16].map(poolSizeFor), [4, 4, 8, 32]);
  assert.equal(loadConfig({}).databasePoolMax, poolSizeFor(os.availableParallelism()));
  assert.equal(loadConfig({ DATABASE_POOL_MAX: '3' }).databasePoolMax, 3);
  for (const bad of ['0', 'ten', '-2', '1001'])
    assert.throws(
      () => loadConfig({ DATABASE_POOL_MAX: bad }),
      (e: Error) => e instanceof ConfigError && /DATABASE_POOL_MAX/.test(e.message),
    );
});

test('PostgreSQL prepared statements: on by default, DATABASE_PREPARED_STATEMENTS=0 turns them off, a word refused', () => {
  assert.equal(loadConfig({}).databasePreparedStatements, true);
  assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: '0' }).databasePreparedStatements, false);
  assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: '1' }).databasePreparedStatements, true);
  assert.throws(
    () => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'maybe' }),
    (e: Error) => e instanceof ConfigError && /DATABASE_PREPARED_STATEMENTS/.test(e.message),
  );
});

test('retention: defaults from limits.ts, each variable honoured, and no value below what a promise needs', () => {
  const DAY = 86_400_000;
  assert.deepEqual(loadConfig({}).retention, { ...RETENTION_DEFAULTS, batchRows: PRUNE_BATCH_ROWS });
  assert.deepEqual(RETENTION_DEFAULTS, {
    eventsMs: 30 * DAY,
    keyUsesMs: 30 * DAY,
    idempotencyMs: DAY,
    outboxMs: 30 * DAY,
    sessionsMs: 7 * DAY,
    jobRunsMs: 30 * DAY,
  });
  const c = loadConfig({
    RETENTION_EVENTS_DAYS: '90',
    RETENTION_KEY_USES_DAYS: '7',
    RETENTION_IDEMPOTENCY_HOURS: '48',
    RETENTION_OUTBOX_DAYS: '1',
    RETENTION_SESSIONS_DAYS: '2',
    RETENTION_JOB_RUNS_DAYS: '3',
    PRUNE_BATCH_ROWS: '250',
  }).retention;
  assert.deepEqual(c, {
    eventsMs: 90 * DAY,
    keyUsesMs: 7 * DAY,
    idempotencyMs: 2 * DAY,
    outboxMs: DAY,
    sessionsMs: 2 * DAY,
    jobRunsMs: 3 * DAY,
    batchRows: 250,
  });
  for (const [env, re] of [
    [{ RETENTION_EVENTS_DAYS: '30d' }, /^RETENTION_EVENTS_DAYS must be an integer from 1 to 3650, got "30d"$/],
    [{ RETENTION_KEY_USES_DAYS: '0' }, /^RETENTION_KEY_USES_DAYS /],
    // A key is honoured for 24 h: forgetting it sooner would break a retry's replay.
    [{ RETENTION_IDEMPOTENCY_HOURS: '23' }, /^RETENTION_IDEMPOTENCY_HOURS must be an integer from 24 /],
    [{ RETENTION_OUTBOX_DAYS: '-1' }, /^RETENTION_OUTBOX_DAYS /],
    [{ RETENTION_SESSIONS_DAYS: '1.5' }, /^RETENTION_SESSIONS_DAYS /],
    // The longest job slot is a day: its row must outlive it.
    [{ RETENTION_JOB_RUNS_DAYS: '1' }, /^RETENTION_JOB_RUNS_DAYS must be an integer from 2 /],
    [{ PRUNE_BATCH_ROWS: '0' }, /^PRUNE_BATCH_ROWS /],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && re.test(e.message),
    );
  }
});

test('TLS: both files or neither; one alone names the variable that is missing', () => {
  assert.equal(loadConfig({}).tls, null);
  assert.deepEqual(loadConfig({ TLS_CERT_FILE: 'tls/cert.pem', TLS_KEY_FILE: '/etc/signet/key.pem' }).tls, {
    certFile: path.resolve('tls/cert.pem'),
    keyFile: '/etc/signet/key.pem',
  });
  for (const [env, message] of [
    [{ TLS_CERT_FILE: 'cert.pem' }, 'TLS_KEY_FILE must be set with TLS_CERT_FILE (or neither)'],
    [{ TLS_KEY_FILE: 'key.pem' }, 'TLS_CERT_FILE must be set with TLS_KEY_FILE (or neither)'],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.message === message,
    );
  }
});

test('every integer variable notes its range; the timeouts reach an hour', () => {
  loadConfig({});
  assert.deepEqual(INTEGER_RANGES.get('PORT'), { min: 0, max: 65535 });
  assert.deepEqual(INTEGER_RANGES.get('HEADERS_TIMEOUT_MS'), { min: 100, max: 3_600_000 });
  assert.deepEqual(INTEGER_RANGES.get('RETENTION_JOB_RUNS_DAYS'), { min: 2, max: 3650 });
  assert.ok(INTEGER_RANGES.size >= 16, `${INTEGER_RANGES.size}`);
  assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
  assert.throws(
    () => loadConfig({ PORT: '65536' }),
    (e: unknown) => e instanceof ConfigError && e.message === 'PORT must be an integer from 0 to 65535, got "65536"',
  );
});

test('SIGNET_SECRET_KEY: 32 bytes as base64 or hex; unset is null; anything else is one line naming it, never echoed', () => {
  const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  assert.equal(loadConfig({}).secretKey, null);
  assert.deepEqual(loadConfig({ SIGNET_SECRET_KEY: key.toString('base64') }).secretKey, key);
  assert.deepEqual(loadConfig({ SIGNET_SECRET_KEY: key.toString('base64url') }).secretKey, key);
  assert.deepEqual(loadConfig({ SIGNET_SECRET_KEY: key.toString('hex') }).secretKey, key);
  assert.deepEqual(loadConfig({ SIGNET_SECRET_KEY: `${key.toString('hex').toUpperCase()}\n` }).secretKey, key);
  for (const bad of ['short', key.subarray(0, 31).toString('base64'), key.toString('hex') + '00', 'x'.repeat(44)]) {
    assert.throws(
      () => loadConfig({ SIGNET_SECRET_KEY: bad }),
      (e: Error) =>
        e instanceof ConfigError &&
        /^SIGNET_SECRET_KEY must be 32 bytes/.test(e.message) &&
        !e.message.includes(bad) &&
        !e.message.includes('\n'),
      bad,
    );
  }
});
