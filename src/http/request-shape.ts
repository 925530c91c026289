// What a request may look like, checked before any route sees it. Guarantees: the URL is at most
// MAX_REQUEST_URL_LENGTH characters (414 url_too_long); a body is JSON or nothing (every other content type is 400
// invalid_request, even on routes that take no body); JSON nests at most MAX_JSON_DEPTH levels, checked in one pass
// that skips string contents, so no body shape makes parsing or validation work more than linearly; prototype-
// poisoning keys and malformed JSON are 400 invalid_request; an empty body is "no body" (DELETE with a JSON content
// type). The raw text is kept for the idempotency fingerprint when the request has an Idempotency-Key.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { apiError } from '../lib/errors.js';
import { MAX_JSON_DEPTH, MAX_REQUEST_URL_LENGTH } from '../limits.js';

export function registerRequestShape(app: FastifyInstance): void {
  app.addHook('onRequest', (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    if (req.url.length > MAX_REQUEST_URL_LENGTH)
      return done(apiError('url_too_long', { meta: { max: MAX_REQUEST_URL_LENGTH } }));
    done();
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    // Kept only where the idempotency fingerprint needs it: a 40 MB upload would otherwise hold it to the end.
    if (req.headers['idempotency-key'] !== undefined) req.rawBody = text;
    if (text.trim() === '') return done(null, undefined);
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(
        apiError('invalid_request', {
          message: `The JSON nests deeper than ${MAX_JSON_DEPTH} levels.`,
          meta: { field: 'body' },
        }),
        undefined,
      );
    }
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(apiError('invalid_request', { message: 'The body is not valid JSON.' }), undefined);
    }
  });
}

/**
 * Whether arrays and objects in a JSON text nest deeper than `max`. Linear: a string is skipped with indexOf (so a
 * long base64 value costs little), and each backslash is looked at once. Malformed text answers false: the parser
 * then refuses it.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end === -1) return false;
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}
