// Guarantee: on the surfaces registered inside it (pages and actions that need no API key: the signer's today, the
// review, embed and dashboard pages later), one client address (IPv6: its /64) makes at most `limit` requests per
// fixed 60 s window. They are counted by the same limiter as the API keys (Redis when configured, per instance
// while it is unreachable), in buckets of their own. Past the limit: 429 with Retry-After, as a page a person can
// read when a browser asked for one, else the catalogue's JSON. /v1 is never registered inside it: keys have
// their own limit.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../lib/errors.js';
import { addressBucket } from '../lib/ip.js';
import type { RateDecision, RateLimiter } from '../ratelimit/ratelimit.js';
import { clientAddress } from './request-context.js';
import { hasBody } from './deadlines.js';

export type AddressLimitOptions = {
  limiter: RateLimiter;
  /** Requests per address per 60 s window. */
  limit: number;
  /** The HTML page answering a browser's refused GET, in the language it asks for. */
  page(req: FastifyRequest, retryAfterSeconds: number): string;
};

type Done = (err?: Error) => void;

export const wantsHtml = (req: FastifyRequest) =>
  req.method === 'GET' && /text\/html/i.test(String(req.headers.accept ?? ''));

export function registerAddressLimit(app: FastifyInstance, o: AddressLimitOptions): void {
  function decided(req: FastifyRequest, reply: FastifyReply, d: RateDecision, done: Done): void {
    if (d.allowed) return done();
    const seconds = d.retryAfterSeconds ?? d.resetSeconds;
    reply.header('Retry-After', String(seconds));
    if (wantsHtml(req)) {
      // Like every early refusal (error-handler.ts): a body it did not wait for must not hold the connection.
      if (hasBody(req)) reply.header('connection', 'close');
      reply.code(429).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(o.page(req, seconds));
      return;
    }
    done(
      apiError('rate_limited', {
        message: `Too many requests from your address: at most ${o.limit} a minute here.`,
        headers: { 'Retry-After': String(seconds) },
      }),
    );
  }

  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: Done) => {
    // An address that cannot be read (a Unix socket) shares one bucket: still limited, never unlimited.
    const bucket = `addr:${addressBucket(clientAddress(req)) ?? 'unknown'}`;
    let d: RateDecision | Promise<RateDecision>;
    try {
      d = o.limiter.hit(bucket, o.limit);
    } catch (err) {
      return done(err as Error);
    }
    if (d instanceof Promise) d.then((x) => decided(req, reply, x, done), done);
    else decided(req, reply, d, done);
  });
}
