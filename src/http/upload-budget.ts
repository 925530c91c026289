// Guarantee: the bodies of requests to routes with `config: { upload: true }` hold at most `max` bytes at once
// (their declared length, or the route's body limit when none is declared, reserved before any byte is read and
// given back when the response is done), and a valid request naming a `file_url` reserves one whole file for its
// download. A request that would pass the bound gets 503 service_unavailable with Retry-After (a body unread), so
// concurrent uploads cannot grow the heap (and the base64 decoding and PDF inspection that follow each admitted
// upload) past a bound.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../lib/errors.js';
import { FILE_BODY_LIMIT, MAX_FILE_BYTES } from '../limits.js';
import { prependRouteHook } from './route-hooks.js';

/** Route options of a route that takes a file: its body limit, the upload timeout and this budget. */
export const UPLOAD_ROUTE = { bodyLimit: FILE_BODY_LIMIT, config: { upload: true } } as const;

export type ByteBudget = {
  /** Reserves `bytes` if they fit; false (nothing reserved) otherwise. */
  take(bytes: number): boolean;
  give(bytes: number): void;
  readonly used: number;
  readonly max: number;
};

export function createByteBudget(max: number): ByteBudget {
  let used = 0;
  return {
    take(bytes) {
      if (used + bytes > max) return false;
      used += bytes;
      return true;
    },
    give(bytes) {
      used = Math.max(0, used - bytes);
    },
    get used() {
      return used;
    },
    max,
  };
}

/** Seconds a refused upload is told to wait: uploads in flight finish in seconds on a healthy connection. */
const RETRY_AFTER_SECONDS = 5;

export function registerUploadBudget(app: FastifyInstance, budget: ByteBudget): void {
  const refuse = () => apiError('service_unavailable', { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } });
  app.addHook('onRoute', (route) => {
    if (!route.config?.upload) return;
    const limit = route.bodyLimit ?? FILE_BODY_LIMIT;
    // preParsing: after the gate (a refused key reserves nothing), before the body is read.
    prependRouteHook(route, 'preParsing', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done) => {
      const declared = Number(req.headers['content-length']);
      // A declared length over the limit is refused unread by the body parser (413); reserve what can arrive.
      const bytes = Number.isFinite(declared) && declared >= 0 ? Math.min(declared, limit) : limit;
      if (!budget.take(bytes)) return done(refuse());
      reply.raw.once('close', () => budget.give(bytes));
      done(null, payload);
    });
    // A file named by `file_url` is downloaded into memory instead: once the body is valid, it reserves a whole file.
    prependRouteHook(route, 'preHandler', (req: FastifyRequest, reply: FastifyReply, done: Done) => {
      if (typeof (req.body as { file_url?: unknown } | undefined)?.file_url !== 'string') return done();
      if (!budget.take(MAX_FILE_BYTES)) return done(refuse());
      reply.raw.once('close', () => budget.give(MAX_FILE_BYTES));
      done();
    });
  });
}

type Done = (err?: Error | null, payload?: unknown) => void;
