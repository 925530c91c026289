// JSON bodies are parsed once from the raw text, which is kept for the idempotency fingerprint. Prototype-poisoning
// keys and malformed JSON are 400 invalid_request; an empty body is "no body" (DELETE with a JSON content type).
// JSON is the only body type: Fastify's default text/plain parser is removed too, so every other content type is
// 400 invalid_request (error-handler.ts), even on routes that take no body.
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { apiError } from '../lib/errors.js';

export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    req.rawBody = text;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(apiError('invalid_request', { message: 'The body is not valid JSON.' }), undefined);
    }
  });
}
