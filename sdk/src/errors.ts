// The one error the client throws for a failed call: an API error (the body's `code`, `error` as message, `meta`)
// or, with `status` 0 and `code` "connection_error", a request that got no answer.
import type { ErrorBody } from './types.js';

/** RateLimit values of a response; present on 2xx and 429 answers only (the spec's rule), else undefined. */
export type RateLimitInfo = {
  /** `RateLimit-Limit`: requests per window. */
  limit?: number;
  /** `RateLimit-Remaining`: requests left in the window. */
  remaining?: number;
  /** `RateLimit-Reset`: seconds until the window resets. */
  reset?: number;
  /** `Retry-After` in seconds (429 and 409 `idempotency_in_progress`, 503). */
  retryAfter?: number;
};

export class SignetError extends Error implements RateLimitInfo {
  override readonly name = 'SignetError';
  /** HTTP status; 0 when no answer arrived (`code` is then `connection_error`). */
  readonly status: number;
  /** The stable machine code (`not_found`, `rate_limited`, …); pin your code on this, never on `message`. */
  readonly code: string;
  /** Structured context from the error body (`meta.field`, `meta.problems`, `meta.role`, …). */
  readonly meta?: Record<string, unknown>;
  /** `ip_not_allowed` only: the address the service observed (null when unknown). */
  readonly ip?: string | null;
  readonly limit?: number;
  readonly remaining?: number;
  readonly reset?: number;
  readonly retryAfter?: number;
  /** `METHOD /path` of the call. */
  readonly request: string;
  /** The response's headers (empty for a connection error). */
  readonly headers: Headers;
  /** The parsed error body, when there was one. */
  readonly body?: ErrorBody;

  constructor(p: {
    status: number;
    code: string;
    message: string;
    request: string;
    meta?: Record<string, unknown>;
    ip?: string | null;
    rateLimit?: RateLimitInfo;
    headers?: Headers;
    body?: ErrorBody;
    cause?: unknown;
  }) {
    super(p.message, p.cause === undefined ? undefined : { cause: p.cause });
    this.status = p.status;
    this.code = p.code;
    this.request = p.request;
    if (p.meta !== undefined) this.meta = p.meta;
    if (p.ip !== undefined) this.ip = p.ip;
    this.limit = p.rateLimit?.limit;
    this.remaining = p.rateLimit?.remaining;
    this.reset = p.rateLimit?.reset;
    this.retryAfter = p.rateLimit?.retryAfter;
    this.headers = p.headers ?? new Headers();
    if (p.body !== undefined) this.body = p.body;
  }
}

const intHeader = (headers: Headers, name: string): number | undefined => {
  const v = headers.get(name);
  if (v === null || !/^\s*\d+\s*$/.test(v)) return undefined;
  return Number(v);
};

/** `Retry-After` as seconds: delta-seconds, or an HTTP date turned into seconds from `nowMs`. */
export function retryAfterSeconds(headers: Headers, nowMs = Date.now()): number | undefined {
  const v = headers.get('retry-after');
  if (v === null) return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

export const rateLimitOf = (headers: Headers): RateLimitInfo => ({
  limit: intHeader(headers, 'ratelimit-limit'),
  remaining: intHeader(headers, 'ratelimit-remaining'),
  reset: intHeader(headers, 'ratelimit-reset'),
  retryAfter: retryAfterSeconds(headers),
});

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === 'object' && v !== null && typeof (v as ErrorBody).code === 'string';

/** The error for a non-2xx answer; a body outside the catalogue (a proxy's HTML page) gets code `http_<status>`. */
export function errorFromResponse(request: string, res: Response, parsed: unknown, text: string): SignetError {
  const body = isErrorBody(parsed) ? parsed : undefined;
  return new SignetError({
    status: res.status,
    code: body?.code ?? `http_${res.status}`,
    message: body?.error ?? `${request} answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    request,
    meta: body?.meta,
    ip: body?.ip,
    rateLimit: rateLimitOf(res.headers),
    headers: res.headers,
    body,
  });
}
