// Every error leaves through here and is rendered from the catalogue; internals (stacks, SQL) are logged, never sent.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, apiError } from './errors.js';

function toApiError(err: FastifyError): ApiError {
  if (err instanceof ApiError) return err;
  if (err.validation) {
    const problems = err.validation.map((v) => ({
      field: (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.') || (v.params as { missingProperty?: string })?.missingProperty || '',
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
      return apiError('invalid_request', { message: 'Bodies must be application/json.', meta: { field: 'content-type' } });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return apiError('invalid_request', { message: 'The body is not valid JSON.' });
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return apiError('invalid_request', { message: 'The request is invalid.' });
  }
  return apiError('internal_error');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const e = toApiError(err);
    if (e.status >= 500) req.log.error({ err }, 'request failed');
    if (e.headers) reply.headers(e.headers);
    return reply.code(e.status).type('application/json; charset=utf-8').send(e.body());
  });
  app.setNotFoundHandler((_req, reply) => {
    const e = apiError('not_found', { message: 'No such route.' });
    return reply.code(404).send(e.body());
  });
}
