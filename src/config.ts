// The only reader of process.env. Parsed once at start-up; a bad value throws ConfigError with one clear line.
import os from 'node:os';
import path from 'node:path';
import { isHeaderAddress } from './lib/email.js';
import { canonicaliseAllowlist } from './lib/ip.js';
import {
  DELIVERY_LEASE_MIN_MS,
  DELIVERY_LEASE_MS,
  FILE_BODY_LIMIT,
  HEADERS_TIMEOUT_MS,
  IDLE_SOCKET_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_BODIES_IN_FLIGHT_BYTES,
  PRUNE_BATCH_ROWS,
  PUBLIC_RATE_LIMIT,
  REQUEST_TIMEOUT_MS,
  RETENTION_DEFAULTS,
  UPLOAD_TIMEOUT_MS,
} from './limits.js';

export type Config = {
  port: number;
  host: string;
  baseUrl: string;
  /**
   * A second permanent address of the same API. With a path (`https://legacy.example.com/esign`), `/v1` is also
   * served under that path (http/alias.ts); links keep using baseUrl.
   */
  aliasBaseUrl: string | null;
  /** The hosting region this deployment records on each workspace it creates (SIGNET_REGION); null: none. */
  region: string | null;
  /**
   * Template instances may be staged for review (`review: true`); `SIGNET_REVIEW_STAGING=0` turns that off, and such
   * calls answer 503 review_unavailable without Retry-After.
   */
  reviewStaging: boolean;
  dataDir: string;
  databaseUrl: string;
  /** PostgreSQL connections per process (DATABASE_POOL_MAX; default poolSizeFor(cores)). Unused on SQLite. */
  databasePoolMax: number;
  /**
   * PostgreSQL: run the few fixed-text hot statements as named prepared statements (DATABASE_PREPARED_STATEMENTS,
   * default on; db/pg-prepared.ts). Off for a pooler in front that moves sessions between server connections.
   */
  databasePreparedStatements: boolean;
  /** How long a worker's delivery claims last (DELIVERY_LEASE_MS): how soon a dead worker's deliveries go to others. */
  deliveryLeaseMs: number;
  redisUrl: string | null;
  allowPrivateNetwork: boolean;
  /**
   * Addresses and CIDR blocks of the proxies whose X-Forwarded-For is believed (TRUST_PROXY; canonical, empty:
   * none, the socket's peer is the client). A wrong entry lets callers choose their address.
   */
  trustProxy: string[];
  logLevel: string;
  /** Monthly document cap per tier; a tier absent here has no cap. `free` has no API access at all. */
  tierCaps: Record<string, number>;
  /** Outgoing mail through SMTP; without it mail goes to the database outbox and the log. */
  smtpUrl: string | null;
  mailFrom: string;
  /** External RFC 3161 TSA; without it the embedded TSA under DATA_DIR/pki stamps seals. */
  tsaUrl: string | null;
  /** PEM file(s) of the CA(s) the external TSA chains to; without it the token's own chain must be self-consistent. */
  tsaCaFile: string | null;
  /** PKCS#12 seal identity; without it a seal certificate is generated under DATA_DIR/pki on first start. */
  sealP12: string | null;
  sealP12Password: string;
  /**
   * Algorithm names (as `cmsAlgorithms` names them: sha1, sha256, ecdsa-with-sha256, sha256-with-rsa, …) whose
   * document timestamps the renewal job renews now, whatever their certificate's expiry.
   */
  ltvWeakAlgorithms: string[];
  /** Protection of the process: timeouts, bodies in flight, the per-address limit on pages without an API key. */
  limits: ProcessLimits;
  /** Text messages through Twilio; without it they stay in the database outbox and the log. */
  sms: SmsConfig | null;
  /**
   * Migrate the database on start (default). `SIGNET_AUTO_MIGRATE=0` leaves it to `signet migrate` (rolling upgrades):
   * features whose tables are missing then answer 503 with Retry-After until it has run.
   */
  autoMigrate: boolean;
  /** The qualified signing provider (CSC API v2 with OAuth 2.0); without it signature_level "qes" answers 503. */
  qes: QesConfig | null;
  /** How long the growing tables keep finished rows, and the prune jobs' batch size. */
  retention: Retention;
  /** HTTPS served by this process (TLS_CERT_FILE, TLS_KEY_FILE); null: plain HTTP, TLS ends in front of it. */
  tls: TlsFiles | null;
  /**
   * The master key of secrets at rest (SIGNET_SECRET_KEY, 32 bytes); null: on the SQLite default one is generated
   * into DATA_DIR/secret.key, on PostgreSQL secrets stay plain (secrets/keyring.ts).
   */
  secretKey: Buffer | null;
};

export type TlsFiles = { certFile: string; keyFile: string };

/** Both or neither: one alone would silently serve plain HTTP. The files are read when the server starts. */
function parseTls(env: NodeJS.ProcessEnv): TlsFiles | null {
  if (!env.TLS_CERT_FILE && !env.TLS_KEY_FILE) return null;
  if (!env.TLS_KEY_FILE) throw new ConfigError('TLS_KEY_FILE must be set with TLS_CERT_FILE (or neither)');
  if (!env.TLS_CERT_FILE) throw new ConfigError('TLS_CERT_FILE must be set with TLS_KEY_FILE (or neither)');
  return { certFile: path.resolve(env.TLS_CERT_FILE), keyFile: path.resolve(env.TLS_KEY_FILE) };
}

export type Retention = { [K in keyof typeof RETENTION_DEFAULTS]: number } & { batchRows: number };

export type QesConfig = {
  /** The CSC API v2 base, e.g. https://qtsp.example/csc/v2 (its `info` is POSTed at start). */
  providerUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM file of the provider's CA certificate(s): the trust anchors of its signers' certificates. */
  caFile: string;
  /** OAuth 2.0 endpoints when `info` does not publish `oauth2`; null: discovered. */
  authorizeUrl: string | null;
  tokenUrl: string | null;
};

const QES_VARS = ['QES_PROVIDER_URL', 'QES_CLIENT_ID', 'QES_CLIENT_SECRET', 'QES_CA_FILE'] as const;

/** All four variables or none; a partial set is a mistake worth stopping for. */
function parseQes(env: NodeJS.ProcessEnv): QesConfig | null {
  const set = QES_VARS.filter((n) => env[n]);
  const extra = ['QES_AUTHORIZE_URL', 'QES_TOKEN_URL'].filter((n) => env[n]);
  if (set.length === 0 && extra.length === 0) return null;
  const missing = QES_VARS.filter((n) => !env[n]);
  if (missing.length)
    throw new ConfigError(`qualified signatures need ${QES_VARS.join(', ')}; missing: ${missing.join(', ')}`);
  const url = (name: string) =>
    env[name] ? parseUrl(name, env[name]!, ['http:', 'https:']).replace(/\/+$/, '') : null;
  return {
    providerUrl: url('QES_PROVIDER_URL')!,
    clientId: env.QES_CLIENT_ID!,
    clientSecret: env.QES_CLIENT_SECRET!,
    caFile: path.resolve(env.QES_CA_FILE!),
    authorizeUrl: url('QES_AUTHORIZE_URL'),
    tokenUrl: url('QES_TOKEN_URL'),
  };
}

export type SmsConfig = { provider: 'twilio'; accountSid: string; authToken: string; from: string; apiBase: string };

/** `twilio://ACCOUNT_SID:AUTH_TOKEN@+15550001111`; the token is never echoed. */
function parseSms(env: NodeJS.ProcessEnv): SmsConfig | null {
  if (!env.SMS_URL) return null;
  const m = /^twilio:\/\/([A-Za-z0-9]+):([^@\s]+)@(\+[1-9]\d{6,14})$/.exec(env.SMS_URL);
  if (!m) throw new ConfigError('SMS_URL must look like twilio://ACCOUNT_SID:AUTH_TOKEN@+15550001111');
  const apiBase = env.SMS_API_BASE
    ? parseUrl('SMS_API_BASE', env.SMS_API_BASE, ['http:', 'https:'])
    : 'https://api.twilio.com';
  return { provider: 'twilio', accountSid: m[1]!, authToken: m[2]!, from: m[3]!, apiBase };
}

export type ProcessLimits = {
  requestTimeoutMs: number;
  uploadTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleSocketTimeoutMs: number;
  maxBodiesInFlightBytes: number;
  publicRateLimit: number;
};

export class ConfigError extends Error {}

/** Every integer variable's accepted range, noted as it is parsed: the start-up test starts the server at each edge. */
export const INTEGER_RANGES = new Map<string, { min: number; max: number }>();

function parseInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  INTEGER_RANGES.set(name, { min, max });
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function parseLimits(env: NodeJS.ProcessEnv): ProcessLimits {
  const ms = (name: string, fallback: number) => parseInteger(env, name, fallback, 100, 3_600_000);
  const l: ProcessLimits = {
    requestTimeoutMs: ms('REQUEST_TIMEOUT_MS', REQUEST_TIMEOUT_MS),
    uploadTimeoutMs: ms('UPLOAD_TIMEOUT_MS', UPLOAD_TIMEOUT_MS),
    headersTimeoutMs: ms('HEADERS_TIMEOUT_MS', HEADERS_TIMEOUT_MS),
    keepAliveTimeoutMs: ms('KEEP_ALIVE_TIMEOUT_MS', KEEP_ALIVE_TIMEOUT_MS),
    idleSocketTimeoutMs: ms('IDLE_SOCKET_TIMEOUT_MS', IDLE_SOCKET_TIMEOUT_MS),
    maxBodiesInFlightBytes: parseInteger(
      env,
      'MAX_BODIES_IN_FLIGHT_BYTES',
      MAX_BODIES_IN_FLIGHT_BYTES,
      FILE_BODY_LIMIT,
      2 ** 40,
    ),
    publicRateLimit: parseInteger(env, 'PUBLIC_RATE_LIMIT', PUBLIC_RATE_LIMIT, 1, 1_000_000),
  };
  if (l.uploadTimeoutMs < l.requestTimeoutMs) {
    throw new ConfigError(
      `UPLOAD_TIMEOUT_MS (${l.uploadTimeoutMs}) must be at least REQUEST_TIMEOUT_MS (${l.requestTimeoutMs})`,
    );
  }
  return l;
}

/**
 * The default PostgreSQL pool of a process: two connections per core, at least 4. A process runs about one query
 * per core at a time (its event loop and its worker threads); a second per core keeps one waiting on the network
 * while another is answered. More only queue on the server, each holding a backend's memory and a slot of
 * max_connections that other instances need.
 */
export const poolSizeFor = (cores: number): number => Math.max(4, 2 * cores);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Each RETENTION_* variable, in whole days (hours for idempotency keys); the defaults are in limits.ts. */
function parseRetention(env: NodeJS.ProcessEnv): Retention {
  const days = (name: string, fallbackMs: number, min = 1) =>
    parseInteger(env, name, fallbackMs / DAY_MS, min, 3650) * DAY_MS;
  const d = RETENTION_DEFAULTS;
  return {
    eventsMs: days('RETENTION_EVENTS_DAYS', d.eventsMs),
    keyUsesMs: days('RETENTION_KEY_USES_DAYS', d.keyUsesMs),
    // Never below the 24 h a key is honoured for: a shorter retention would break replays.
    idempotencyMs:
      parseInteger(env, 'RETENTION_IDEMPOTENCY_HOURS', d.idempotencyMs / HOUR_MS, d.idempotencyMs / HOUR_MS, 87_600) *
      HOUR_MS,
    outboxMs: days('RETENTION_OUTBOX_DAYS', d.outboxMs),
    sessionsMs: days('RETENTION_SESSIONS_DAYS', d.sessionsMs),
    // Above the longest job slot (a day), so a slot row is never deleted while its slot is current.
    jobRunsMs: days('RETENTION_JOB_RUNS_DAYS', d.jobRunsMs, 2),
    batchRows: parseInteger(env, 'PRUNE_BATCH_ROWS', PRUNE_BATCH_ROWS, 1, 100_000),
  };
}

/** A short label such as `eu-central`: what a customer reads on /v1/me, so nothing that needs escaping. */
function parseRegion(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  if (!/^[a-z0-9-]{1,32}$/.test(value)) {
    throw new ConfigError(`SIGNET_REGION must be 1 to 32 lowercase letters, digits or hyphens, got "${value}"`);
  }
  return value;
}

/** The alias's path may not sit under /v1: /v1/… would then name two different things. */
function parseAliasBaseUrl(value: string | undefined): string | null {
  if (!value) return null;
  const alias = parseUrl('ALIAS_BASE_URL', value, ['http:', 'https:']).replace(/\/+$/, '');
  const u = new URL(alias);
  if (u.search || u.hash) throw new ConfigError(`ALIAS_BASE_URL must have no query or fragment, got "${value}"`);
  if (/^\/v1(\/|$)/.test(u.pathname))
    throw new ConfigError(`ALIAS_BASE_URL's path may not start with /v1, got "${value}"`);
  return alias;
}

const TIERS = ['free', 'starter', 'business', 'enterprise'] as const;

function parseUrl(name: string, value: string, protocols: string[]): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${value}"`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${value}"`);
  }
  return value;
}

function parseBool(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (['1', 'true', 'yes', 'on'].includes(value.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(value.toLowerCase())) return false;
  throw new ConfigError(`${name} must be 1/0/true/false, got "${value}"`);
}

/** `1` (the default) or `0`, nothing else: a switch whose spelling is never guessed. */
function parseSwitch(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '' || value === '1') return true;
  if (value === '0') return false;
  throw new ConfigError(`${name} must be 1 or 0, got "${value}"`);
}

function parseTrustProxy(value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const r = canonicaliseAllowlist(entries);
  if (!r.ok) {
    throw new ConfigError(
      `TRUST_PROXY must list proxy addresses or CIDR blocks separated by commas (${r.reason}), got "${r.entry || value}"`,
    );
  }
  return r.list;
}

function parseTierCaps(value: string | undefined): Record<string, number> {
  const caps: Record<string, number> = { starter: 50, business: 1000 };
  if (!value) return caps;
  for (const part of value.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m || !(TIERS as readonly string[]).includes(m[1]!)) {
      throw new ConfigError(`SIGNET_TIER_CAPS must look like "starter=50,business=1000", got "${value}"`);
    }
    caps[m[1]!] = Number(m[2]);
  }
  return caps;
}

/** A 32-byte key written as base64 (44 characters, or base64url) or hex (64 characters); anything else is refused. */
export function parseSecretKey(name: string, raw: string): Buffer {
  const text = raw.trim();
  const hex = /^[0-9a-fA-F]{64}$/.test(text);
  const b64 = /^[A-Za-z0-9+/_-]{43}=?$/.test(text);
  const key = hex ? Buffer.from(text, 'hex') : b64 ? Buffer.from(text, 'base64') : null;
  if (key?.length !== 32) {
    throw new ConfigError(`${name} must be 32 bytes in base64 or hex (e.g. \`openssl rand -base64 32\`)`);
  }
  return key;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = parseInteger(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '::';
  const baseUrl = parseUrl('BASE_URL', env.BASE_URL || `http://localhost:${port}`, ['http:', 'https:']).replace(
    /\/+$/,
    '',
  );
  const aliasBaseUrl = parseAliasBaseUrl(env.ALIAS_BASE_URL);
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const databaseUrl = env.DATABASE_URL || `sqlite:${path.join(dataDir, 'signet.db')}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres://, got "${redactUrl(databaseUrl)}"`);
  }
  const redisUrl = env.REDIS_URL ? parseUrl('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:']) : null;
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal,error,warn,info,debug,trace,silent, got "${logLevel}"`);
  }
  const smtpUrl = env.SMTP_URL ? parseUrl('SMTP_URL', env.SMTP_URL, ['smtp:', 'smtps:']) : null;
  const mailFrom = env.MAIL_FROM || 'no-reply@localhost';
  if (!isHeaderAddress(mailFrom)) throw new ConfigError(`MAIL_FROM must be an e-mail address, got "${mailFrom}"`);
  const tsaUrl = env.TSA_URL ? parseUrl('TSA_URL', env.TSA_URL, ['http:', 'https:']) : null;
  const sealP12 = env.SEAL_P12 ? path.resolve(env.SEAL_P12) : null;
  return {
    port,
    host,
    baseUrl,
    aliasBaseUrl,
    region: parseRegion(env.SIGNET_REGION),
    reviewStaging: parseSwitch('SIGNET_REVIEW_STAGING', env.SIGNET_REVIEW_STAGING),
    dataDir,
    databaseUrl,
    databasePoolMax: parseInteger(env, 'DATABASE_POOL_MAX', poolSizeFor(os.availableParallelism()), 1, 1000),
    databasePreparedStatements: parseSwitch('DATABASE_PREPARED_STATEMENTS', env.DATABASE_PREPARED_STATEMENTS),
    deliveryLeaseMs: parseInteger(env, 'DELIVERY_LEASE_MS', DELIVERY_LEASE_MS, DELIVERY_LEASE_MIN_MS, 3_600_000),
    redisUrl,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    allowPrivateNetwork: parseBool('SIGNET_ALLOW_PRIVATE_NETWORK', env.SIGNET_ALLOW_PRIVATE_NETWORK),
    logLevel,
    tierCaps: parseTierCaps(env.SIGNET_TIER_CAPS),
    smtpUrl,
    mailFrom,
    tsaUrl,
    tsaCaFile: env.TSA_CA_FILE ? path.resolve(env.TSA_CA_FILE) : null,
    sealP12,
    sealP12Password: env.SEAL_P12_PASSWORD ?? '',
    ltvWeakAlgorithms: parseWeakAlgorithms(env.LTV_WEAK_ALGORITHMS),
    limits: parseLimits(env),
    sms: parseSms(env),
    autoMigrate: env.SIGNET_AUTO_MIGRATE === undefined || parseBool('SIGNET_AUTO_MIGRATE', env.SIGNET_AUTO_MIGRATE),
    qes: parseQes(env),
    retention: parseRetention(env),
    tls: parseTls(env),
    secretKey: env.SIGNET_SECRET_KEY ? parseSecretKey('SIGNET_SECRET_KEY', env.SIGNET_SECRET_KEY) : null,
  };
}

/** Hide passwords in URLs before they reach a message or a log. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

export const tiers = TIERS;
export type Tier = (typeof TIERS)[number];

function parseWeakAlgorithms(raw: string | undefined): string[] {
  const names = (raw ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const bad = names.find((n) => !/^[a-z0-9.-]+$/.test(n));
  if (bad) throw new ConfigError(`LTV_WEAK_ALGORITHMS: "${bad}" is not an algorithm name (e.g. sha1,sha1-with-rsa)`);
  return names;
}
