// Webhook signatures, written once in the SDK: `verify` for receivers, `sign` for receivers' own tests.
// The scheme (spec, Events → Signature): header `t=<unix seconds>,v1=<64 lowercase hex>` where v1 is
// HMAC-SHA256, keyed with the whole `whsec_…` secret as UTF-8, over `<t>.<raw body bytes>`. Both header families,
// X-Service-* and X-Legacy-*, carry byte-identical values; either is accepted.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './events.js';

export const SIGNATURE_HEADER = 'x-service-signature';
export const LEGACY_SIGNATURE_HEADER = 'x-legacy-signature';
export const USER_AGENT = 'service-webhooks/1.0';
/** The spec's recommended receiver tolerance. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookErrorCode =
  | 'parsed_body'
  | 'no_signature_header'
  | 'malformed_signature_header'
  | 'signature_mismatch'
  | 'timestamp_outside_tolerance'
  | 'invalid_json';

/** Why a delivery was refused; `code` is stable, the message says what to do. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Request headers as a `Headers` (fetch, undici) or a plain object in any case (Node's `req.headers`, Express). */
export type HeadersInput = Headers | Record<string, string | readonly string[] | undefined>;

/** The raw body exactly as received: a string, or bytes (Buffer, Uint8Array, ArrayBuffer). */
export type RawBody = string | Uint8Array | ArrayBuffer;

export type VerifyOptions = {
  /** Largest accepted difference between `t` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock: a Date, or Unix time in seconds (default: the system clock). */
  now?: Date | number;
};

export type SignOptions = {
  /** The `t` to sign with: a Date, or Unix time in seconds (default: now). */
  timestamp?: Date | number;
};

const encoder = new TextEncoder();

function bytesOf(rawBody: unknown): Uint8Array {
  if (typeof rawBody === 'string') return encoder.encode(rawBody);
  if (rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  throw new WebhookVerificationError(
    'parsed_body',
    `Pass the raw body, not parsed JSON: the signature covers the bytes as received (got ${describe(rawBody)}). ` +
      'Read the body as text or a Buffer before any JSON parser runs (Express: express.raw({ type: "application/json" }); ' +
      'Fastify: a content-type parser with parseAs "buffer"; fetch: await request.text()).',
  );
}

const describe = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

function headerOf(headers: HeadersInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (k.toLowerCase() !== name) continue;
    if (typeof v === 'string') return v;
    if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  }
  return undefined;
}

const unixSeconds = (v: Date | number | undefined): number =>
  Math.floor(v === undefined ? Date.now() / 1000 : v instanceof Date ? v.getTime() / 1000 : v);

function hmacHex(secret: string, t: number | string, body: Uint8Array): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

type ParsedHeader = { t: number; v1: string[] };

function parseSignature(header: string): ParsedHeader | null {
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1') v1.push(v);
  }
  return t === null || v1.length === 0 ? null : { t, v1 };
}

/** Constant-time comparison of a candidate against the expected 64 lowercase hex characters. */
function sameSignature(expectedHex: string, candidate: string): boolean {
  const expected = Buffer.from(expectedHex, 'utf8');
  const given = Buffer.from(candidate, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Checks a delivery and returns its event. Throws `WebhookVerificationError` when the body is not the raw body,
 * when there is no signature header (X-Service-Signature or X-Legacy-Signature), when the signature does not match,
 * or when `t` is further than `toleranceSeconds` from now. Deduplicate on `event_id` after this and before the work.
 */
export function verify(
  rawBody: RawBody,
  headers: HeadersInput,
  secret: string,
  options: VerifyOptions = {},
): WebhookEvent {
  const body = bytesOf(rawBody);
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError('secret must be the hook’s whsec_… string (shown once when the hook was created).');
  }
  if (headers === null || typeof headers !== 'object') {
    throw new TypeError('headers must be a Headers object or a plain object of the request’s headers.');
  }
  const header = headerOf(headers, SIGNATURE_HEADER) ?? headerOf(headers, LEGACY_SIGNATURE_HEADER);
  if (header === undefined) {
    throw new WebhookVerificationError(
      'no_signature_header',
      'No signature header: expected X-Service-Signature (or X-Legacy-Signature). Pass the request’s own headers, ' +
        'and check that no proxy strips them.',
    );
  }
  const parsed = parseSignature(header);
  if (!parsed) {
    throw new WebhookVerificationError(
      'malformed_signature_header',
      `Malformed signature header: expected "t=<unix seconds>,v1=<64 hex>", got "${header.slice(0, 100)}".`,
    );
  }
  const expected = hmacHex(secret, parsed.t, body);
  // Every candidate is compared, so the time taken does not depend on which one matched.
  let matched = false;
  for (const candidate of parsed.v1) matched = sameSignature(expected, candidate) || matched;
  if (!matched) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      'Signature mismatch: the body or the secret differs from what was signed. Use the hook’s own whsec_… secret ' +
        '(each hook has its own) and the raw body byte for byte, not a re-serialised object.',
    );
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = unixSeconds(options.now);
  if (Math.abs(now - parsed.t) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `Timestamp outside tolerance: t=${parsed.t} is ${Math.abs(now - parsed.t)} s from now (${now}), more than ` +
        `${tolerance} s. A replayed or delayed delivery, or a receiver clock that is off (sync it with NTP).`,
    );
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('invalid_json', 'The signature is valid but the body is not UTF-8 JSON.');
  }
}

/** The header value for a body: `t=<t>,v1=<hex>`. */
export function signatureHeader(rawBody: RawBody, secret: string, options: SignOptions = {}): string {
  const t = unixSeconds(options.timestamp);
  return `t=${t},v1=${hmacHex(secret, t, bytesOf(rawBody))}`;
}

function parseEvent(rawBody: RawBody): { event?: unknown; event_id?: unknown } | null {
  try {
    const v: unknown = JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(bytesOf(rawBody)));
    return typeof v === 'object' && v !== null ? v : null;
  } catch {
    return null;
  }
}

/**
 * The headers Signet sends with a delivery of `rawBody` (both families, byte-identical), for your own tests: post
 * `rawBody` with them to your receiver. Event id and name are read from the body when it is an event.
 */
export function sign(rawBody: RawBody, secret: string, options: SignOptions = {}): Record<string, string> {
  const sig = signatureHeader(rawBody, secret, options);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-signature': sig,
    'x-legacy-signature': sig,
  };
  const event = parseEvent(rawBody);
  if (event && typeof event.event_id === 'string') {
    headers['x-service-event-id'] = headers['x-legacy-event-id'] = event.event_id;
  }
  if (event && typeof event.event === 'string') headers['x-service-event'] = headers['x-legacy-event'] = event.event;
  return headers;
}

export const webhooks = { verify, sign, signatureHeader };
export type Webhooks = typeof webhooks;
