// Guarantees: no client keeps a connection by sending slowly or not at all.
// - The request line and headers must arrive within `headersTimeoutMs` of the connection opening (or of the previous
//   request on it): Node answers 408 request_timeout (error-handler.ts) and closes.
// - A body must arrive within `requestTimeoutMs` of its headers, or `uploadTimeoutMs` on routes with
//   `config: { upload: true }`: 408 request_timeout with `Connection: close`. A request answered before its body
//   arrived (refused unread) has its connection half-closed once the answer is out, and closed when the client
//   stops sending or LINGER_MS later (a lingering close: no reset for a client still writing).
// - An idle keep-alive connection closes after `keepAliveTimeoutMs` (Node adds 1 s so that a client reusing it at
//   the advertised last moment is not reset), and any socket without traffic after `idleSocketTimeoutMs` (longer
//   than any handler may run).
import type { IncomingMessage } from 'node:http';
import type { SecureContextOptions } from 'node:tls';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { ProcessLimits } from '../config.js';
import { MAX_HEADER_BYTES } from '../limits.js';
import { apiError } from '../lib/errors.js';
import { prependRouteHook } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a file: the upload timeout and the bodies-in-flight budget apply. */
    upload?: true;
  }
}

/**
 * Fastify's server options for these limits, over HTTPS when `https` is given. Node checks headersTimeout against
 * requestTimeout when it creates the server, so both go to it together (Fastify sets requestTimeout only after).
 */
export function serverOptions(l: ProcessLimits, https?: SecureContextOptions): Partial<FastifyServerOptions> {
  // Node's own whole-request limit is only the backstop; the body deadline below is per route.
  const requestTimeout = l.headersTimeoutMs + l.uploadTimeoutMs;
  const node = {
    requestTimeout,
    headersTimeout: l.headersTimeoutMs,
    maxHeaderSize: MAX_HEADER_BYTES,
    // How often Node looks for connections past the headers timeout: a stalled client is closed within it.
    connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(l.headersTimeoutMs / 4))),
  };
  return {
    requestTimeout,
    keepAliveTimeout: l.keepAliveTimeoutMs,
    connectionTimeout: l.idleSocketTimeoutMs,
    // Fastify hands Node `https` instead of `http` when it is set: the limits go in either.
    ...(https ? { https: { ...https, ...node } } : { http: node }),
  } as Partial<FastifyServerOptions>;
}

export const hasBody = (req: FastifyRequest): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** How long a connection refused unread keeps reading (and dropping) what its client still sends, after the answer. */
export const LINGER_MS = 2_000;

/** Methods whose bodies Fastify reads; a body sent with GET or HEAD is never read, only dropped after the answer. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function registerBodyDeadline(
  app: FastifyInstance,
  l: Pick<ProcessLimits, 'requestTimeoutMs' | 'uploadTimeoutMs'>,
): void {
  app.addHook('onRoute', (route) => {
    if (![route.method].flat().some((m) => BODY_METHODS.has(m))) return;
    const ms = route.config?.upload ? l.uploadTimeoutMs : l.requestTimeoutMs;
    prependRouteHook(route, 'onRequest', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      // Requests without a body are whole once their headers are: no timer.
      if (!hasBody(req)) return done();
      const timer = setTimeout(() => timedOut(req, reply), ms);
      // A connection gone before this hook ran gives the request neither event again: its timer would outlive it
      // (issue 25's create bench left them holding the process for minutes). Its socket's close clears it too.
      const socket = req.raw.socket;
      const clear = () => {
        clearTimeout(timer);
        socket?.off('close', clear);
      };
      req.raw.once('end', clear);
      req.raw.once('close', clear);
      if (!socket || socket.destroyed) clear();
      else socket.once('close', clear);
      done();
    });
  });
  // Answered before its body arrived (401, 413, 429, 503), by a route or by a hook before any route ran: the
  // connection cannot carry another request until the rest is drained, which a client holding its answer may never
  // send. It closes once the answer is out, lingering for a client still sending.
  app.addHook('onResponse', (req, _reply, done) => {
    if (hasBody(req) && !req.raw.complete && req.raw.socket) lingerClose(req.raw);
    done();
  });
}

/**
 * Half-closes after the answer and drops what the client still sends until it stops (its FIN) or LINGER_MS pass,
 * then closes. Closing at once with its body unread makes the kernel answer the rest with a reset, and a client
 * still writing sees EPIPE instead of its answer. Node's own close of a `Connection: close` answer (destroySoon,
 * which waits for our FIN to be sent and then destroys) is taken back for that.
 */
function lingerClose(req: IncomingMessage): void {
  const socket = req.socket;
  if (socket.destroyed) return;
  socket.removeListener('finish', socket.destroy);
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(close, LINGER_MS);
  socket.once('end', close);
  socket.once('close', () => clearTimeout(timer));
  socket.end();
  // Read on, dropping the rest of the body: a paused request would stop the socket's reads too.
  req.resume();
}

function timedOut(req: FastifyRequest, reply: FastifyReply): void {
  if (req.raw.complete) return;
  // While Fastify reads the body, its reader listens for errors: the answer then goes out through the error handler.
  if (!reply.raw.headersSent && req.raw.listenerCount('error') > 0) {
    req.raw.emit('error', apiError('request_timeout', { headers: { connection: 'close' } }));
    return;
  }
  req.raw.socket?.destroy();
}
