// The transport under every Signet call: its URL and headers, its Idempotency-Key, and whether and when it is retried.
//
// Retries (each waits through the injectable `sleep`, so tests move a clock instead of waiting):
// - 429 `rate_limited`: always (the refused request was not counted or run), after `Retry-After`.
// - 409 `idempotency_in_progress`: always (it only happens to a call carrying an Idempotency-Key), after
//   `Retry-After`; the retry gets the first request's stored answer.
// - no answer (connection refused or reset, DNS, timeout): only for idempotent calls: GET and DELETE, and a POST
//   carrying an Idempotency-Key, which the service replays instead of running twice. Exponential backoff with jitter.
// - 503 with `Retry-After` (the database is away, the upload budget is full, a rolling upgrade): only for idempotent
//   calls, after `Retry-After`. A 503 without it (`qes_unavailable`) is not passing, and is not retried.
// Every POST gets an Idempotency-Key (crypto.randomUUID) unless one is given; `idempotencyKey: null` sends none.
// Nothing else is retried: other 4xx and 5xx answers throw a SignetError at once.
import { randomUUID } from 'node:crypto';
import { SignetError, errorFromResponse, retryAfterSeconds } from './errors.js';
import type { ApiPath, HttpMethod } from './types.js';

export const SDK_VERSION = '0.1.0';

export type RequestOptions = {
  /**
   * For POSTs: the Idempotency-Key (1–255 visible ASCII characters). Default: a new UUID per call, reused by that
   * call's retries. `null` sends none, and then a POST is not retried when no answer arrives.
   */
  idempotencyKey?: string | null;
  /** Aborts the call, retries and waits included. */
  signal?: AbortSignal;
};

export type Call<P extends ApiPath = ApiPath, M extends HttpMethod = HttpMethod> = {
  method: M;
  path: P;
  params?: Record<string, string | number>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** A body that is not JSON (a bulk send's CSV), sent as it is with its content type. */
  text?: { body: string; type: string };
  accept?: string;
  binary?: boolean;
  options?: RequestOptions;
};

/** What every call needs of the client's options, resolved once by its constructor. */
export type Transport = {
  apiKey: string;
  baseUrl: string;
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  maxRetries: number;
  headers: Record<string, string>;
};

/** Exponential backoff for connection errors: 0.5 s, 1 s, 2 s, … up to 8 s, each with up to half of it as jitter. */
export const backoffMs = (attempt: number): number => {
  const base = Math.min(8000, 500 * 2 ** attempt);
  return base / 2 + Math.random() * (base / 2);
};

/** One call, retried by the rules above; resolves with the answer (parsed JSON, text, bytes or undefined). */
export async function request<T>(t: Transport, c: Call): Promise<T> {
  const path = c.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = c.params?.[name];
    if (v === undefined || v === '') throw new TypeError(`${c.path}: ${name} is required.`);
    return encodeURIComponent(String(v));
  });
  const url = new URL(t.baseUrl + path);
  for (const [k, v] of Object.entries(c.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const method = c.method.toUpperCase();
  const label = `${method} ${c.path}`;

  const headers: Record<string, string> = {
    ...t.headers,
    authorization: `Bearer ${t.apiKey}`,
    accept: c.accept ?? 'application/json',
    'user-agent': `signet-sdk-node/${SDK_VERSION}`,
  };
  let body: string | undefined;
  if (c.body !== undefined) {
    body = JSON.stringify(c.body);
    headers['content-type'] = 'application/json';
  } else if (c.text !== undefined) {
    body = c.text.body;
    headers['content-type'] = c.text.type;
  }
  const given = c.options?.idempotencyKey;
  const idempotencyKey = given !== undefined ? given : method === 'POST' ? randomUUID() : null;
  if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
  // A POST without a key may have run when no answer came back, so only the others are repeated then.
  const repeatable = method !== 'POST' || idempotencyKey !== null;
  const signal = c.options?.signal;

  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const canRetry = attempt < t.maxRetries;
    let res: Response;
    try {
      res = await t.fetch(url, { method, headers, body, signal, redirect: 'manual' });
    } catch (err) {
      if (signal?.aborted) throw err;
      if (repeatable && canRetry) {
        await wait(t, backoffMs(attempt), signal);
        continue;
      }
      throw new SignetError({
        status: 0,
        code: 'connection_error',
        message:
          `${label}: no answer from ${url.origin} (${describeCause(err)})` +
          (repeatable
            ? `; gave up after ${attempt + 1} attempt${attempt ? 's' : ''}.`
            : '; not retried: a POST without an Idempotency-Key might have been carried out.'),
        request: label,
        cause: err,
      });
    }

    if (res.ok) return (await readSuccess(res, c.binary)) as T;

    const text = await res.text();
    const parsed = parseJson(text);
    const error = errorFromResponse(label, res, parsed, text);
    const waitable =
      res.status === 429 ||
      (res.status === 409 && error.code === 'idempotency_in_progress') ||
      (res.status === 503 && repeatable && res.headers.has('retry-after'));
    if (waitable && canRetry) {
      const seconds = retryAfterSeconds(res.headers);
      await wait(t, seconds === undefined ? backoffMs(attempt) : seconds * 1000, signal);
      continue;
    }
    throw error;
  }
}

async function wait(t: Transport, ms: number, signal?: AbortSignal): Promise<void> {
  await t.sleep(ms);
  signal?.throwIfAborted();
}

async function readSuccess(res: Response, binary?: boolean): Promise<unknown> {
  if (binary) return new Uint8Array(await res.arrayBuffer());
  const text = await res.text();
  if (res.status === 204 || text === '') return undefined;
  return (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
}
