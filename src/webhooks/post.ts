// One webhook POST through undici's dispatch API, and the one timer that enforces every POST's deadline. Callbacks
// instead of a response stream, and one timer per worker instead of an AbortController and a timer per request:
// each of those was a measurable share of a delivery's CPU (BENCHMARKS.md, issue 25).
// Guarantees:
// - `done` resolves exactly once and never rejects: a status with at most `limit` characters of the body, or an
//   error. Past `limit` bytes the rest is not read and the connection is dropped.
// - A response counts only when it is complete within `timeoutMs` of the start: one that completes later is a
//   timeout even if the timer has not fired yet; a request still open at its deadline is aborted then.
// - Redirects are never followed (dispatch has no redirect handling).
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { withoutNul } from '../lib/logger.js';

export type PostResult =
  | { statusCode: number; body: string; error: null; timedOut: false }
  | { statusCode: null; body: null; error: unknown; timedOut: boolean };

/** What a POST needs of its target, parsed once per URL. */
type Target = { origin: string; path: string };

class DeadlinePassed extends Error {}
class BodyCapped extends Error {}

export type Poster = {
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
  /** The receiver a URL names (its origin), for per-receiver bookkeeping; an unparsable URL is its own. */
  origin(url: string): string;
  /** Requests in flight. */
  readonly inFlight: number;
};

// One decoder for every response: opening one per response (ICU's converter) was a measurable share of a delivery.
const decoder = new TextDecoder();

/**
 * At most `limit` characters of the first `limit` bytes as UTF-8, without a character cut in half at the end (left
 * out, not shown as U+FFFD: the streaming decode holds it back, and the flush after it, discarded, resets the decoder).
 */
export function utf8Prefix(bytes: Buffer, limit: number): string {
  const text = decoder.decode(bytes.subarray(0, limit), { stream: true }).slice(0, limit);
  decoder.decode();
  return text;
}

/** POSTs through `agent`, each with `timeoutMs` to complete; keeps `limit` characters of each response body. */
export function createPoster(agent: Dispatcher, timeoutMs: number, limit: number): Poster {
  const targets = new Map<string, Target>();
  const targetOf = (url: string): Target => {
    let t = targets.get(url);
    if (t === undefined) {
      const u = new URL(url);
      t = { origin: u.origin, path: `${u.pathname}${u.search}` };
      if (targets.size >= 1000) targets.clear();
      targets.set(url, t);
    }
    return t;
  };

  // Every request has the same timeout, so start order is deadline order: the oldest entry is due first.
  type Open = { deadline: number; abort(): void };
  const open = new Set<Open>();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const first = open.values().next().value;
    if (first === undefined || timer !== undefined) return;
    timer = setTimeout(expire, Math.max(0, first.deadline - performance.now()));
    // The requests' sockets keep the process alive while any is open; the timer alone must not (a CLI run ends).
    timer.unref();
  };
  function expire() {
    timer = undefined;
    const now = performance.now();
    for (const o of open) {
      if (o.deadline > now) break;
      open.delete(o);
      o.abort();
    }
    arm();
  }

  function post(url: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      let controller: Dispatcher.DispatchController | undefined;
      const entry: Open = {
        deadline: started + timeoutMs,
        abort() {
          failed(new DeadlinePassed(), true);
          controller?.abort(new DeadlinePassed());
        },
      };
      const settle = (r: PostResult) => {
        if (settled) return;
        settled = true;
        open.delete(entry);
        if (open.size === 0 && timer !== undefined) {
          clearTimeout(timer);
          timer = undefined;
        }
        resolve(r);
      };
      const failed = (error: unknown, timedOut: boolean) => settle({ statusCode: null, body: null, error, timedOut });
      let statusCode = 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        if (performance.now() - started > timeoutMs) return failed(new DeadlinePassed(), true);
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        settle({ statusCode, body: withoutNul(utf8Prefix(bytes, limit)), error: null, timedOut: false });
      };
      let target: Target;
      try {
        target = targetOf(url);
      } catch (err) {
        return failed(err, false);
      }
      open.add(entry);
      arm();
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          // Past its deadline while it waited for a connection: already counted as a timeout.
          if (settled) c.abort(new DeadlinePassed());
        },
        onResponseStart(_c, code) {
          statusCode = code;
        },
        onResponseData(c, chunk) {
          if (settled) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= limit) {
            finish();
            // Drops the connection: the rest of the body is never read.
            c.abort(new BodyCapped());
          }
        },
        onResponseEnd() {
          finish();
        },
        onResponseError(_c, err) {
          const code = (err as { code?: string }).code;
          failed(
            err,
            err instanceof DeadlinePassed || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT',
          );
        },
      };
      agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers,
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        handler,
      );
    });
  }

  return {
    post,
    origin(url) {
      try {
        return targetOf(url).origin;
      } catch {
        return url;
      }
    },
    get inFlight() {
      return open.size;
    },
  };
}
