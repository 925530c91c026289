// Every error leaves through here and is rendered from the catalogue; internals (stacks, SQL) are logged, never sent.
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, apiError } from '../lib/errors.js';
import { isDatabaseUnavailable, isOutOfSpace } from '../db/db.js';
import { hasBody } from './deadlines.js';

const DATABASE_RETRY_AFTER_S = 2;
// Space comes back when an operator frees some: not within seconds.
const OUT_OF_SPACE_RETRY_AFTER_S = 60;

function toApiError(err: FastifyError): ApiError {
  if (err instanceof ApiError) return err;
  if (err.validation) {
    const problems = err.validation.map((v) => ({
      field:
        (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.') ||
        (v.params as { missingProperty?: string })?.missingProperty ||
        '',
      message: v.message ?? 'invalid',
    }));
    const first = problems[0];
    return apiError('invalid_request', {
      message: `Invalid ${err.validationContext ?? 'request'}: ${first ? `${first.field || '(root)'} ${first.message}` : 'invalid'}.`,
      meta: { field: first?.field ?? null, problems },
    });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return apiError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return apiError('invalid_request', {
        message: 'Bodies must be application/json.',
        meta: { field: 'content-type' },
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return apiError('invalid_request', { message: 'The body is not valid JSON.' });
  }
  if (isOutOfSpace(err)) {
    return apiError('service_unavailable', {
      message: 'The server is out of storage space; nothing was saved. Retry after the time in Retry-After.',
      headers: { 'Retry-After': String(OUT_OF_SPACE_RETRY_AFTER_S) },
    });
  }
  if (isDatabaseUnavailable(err)) {
    return apiError('service_unavailable', {
      message: 'The database cannot be reached; retry after the time in Retry-After.',
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
    });
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return apiError('invalid_request', { message: 'The request is invalid.' });
  }
  return apiError('internal_error');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const e = toApiError(err);
    if (e.status >= 500 && e.code !== 'service_unavailable') req.log.error({ err }, 'request failed');
    else if (isOutOfSpace(err)) req.log.error({ err }, 'out of storage space: a write was refused');
    else if (e.code === 'service_unavailable' && !(err instanceof ApiError))
      req.log.warn({ err }, 'database unavailable');
    if (e.headers) reply.headers(e.headers);
    // Refused before its body arrived (401, 413, 503): close after the answer instead of waiting for bytes the
    // client may never send (it has its answer); the body deadline would close it only much later.
    if (hasBody(req) && !req.raw.complete) reply.header('connection', 'close');
    return reply.code(e.status).type('application/json; charset=utf-8').send(e.body());
  });
  app.setNotFoundHandler(notFound);
}

/** Unknown routes: the catalogue's 404. The /v1 plugin sets it again so that its gate runs first. */
export function notFound(_req: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send(apiError('not_found', { message: 'No such route.' }).body());
}

/**
 * Fastify's `frameworkErrors`: failures found while routing, before any hook runs (a path that does not
 * percent-decode, a path parameter over the router's length limit). Same catalogue body as everything else.
 */
export function frameworkErrorHandler(err: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
  const e =
    err.code === 'FST_ERR_BAD_URL'
      ? apiError('invalid_request', {
          message: 'The URL path is not valid percent-encoded UTF-8.',
          meta: { field: 'path' },
        })
      : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? apiError('invalid_request', { message: 'A path segment is too long.', meta: { field: 'path' } })
        : apiError('internal_error');
  return reply.code(e.status).type('application/json; charset=utf-8').send(e.body());
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses (unknown method, bytes not allowed in a
 * request line or header, headers over the size limit) and requests Node's timeouts cut off (deadlines.ts).
 * Answered with the catalogue's invalid_request or request_timeout body, then the connection is closed, as Node
 * does by default.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const e =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? apiError('request_timeout')
        : apiError('invalid_request', {
            message:
              err.code === 'HPE_HEADER_OVERFLOW'
                ? 'The request headers are too large.'
                : 'The request is not valid HTTP.',
          });
    const body = JSON.stringify(e.body());
    const reason = e.status === 408 ? 'Request Timeout' : 'Bad Request';
    socket.write(
      `HTTP/1.1 ${e.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
