// The review page of staged template instances under /review/<token>, registered inside app.ts's `keyless` plugin
// (no API key; the per-address limit applies; the unguessable token is the credential). Wiring only: the rules are
// in ../instances.ts, the HTML in review-page.ts. Confirm and discard are plain form posts answered with 303 to the
// page, which then shows the outcome; a refusal is a page at the catalogue's status. A JSON client (Accept:
// application/json) gets the instance, or the catalogue's error body, instead.
import querystring from 'node:querystring';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { migrationApplied } from '../../db/migrate.js';
import { createFeatureGate, registerFeatureGate } from '../../http/feature-gate.js';
import { ApiError } from '../../lib/errors.js';
import { localeFromAcceptLanguage } from '../../web/html.js';
import { confirmInstance, discardInstance } from '../staging.js';
import { reviewPdf, reviewView } from './review.service.js';
import type { TemplatesDeps } from '../templates.service.js';
import {
  renderReviewError,
  renderReviewPage,
  REVIEW_PAGE_HEADERS,
  reviewBase,
  type ReviewAction,
} from './review-page.js';

const PRIVATE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
/** The forms send no fields; a few KB leaves room for what a browser might add. */
const FORM_BODY_LIMIT = 8 * 1024;
const HTML = 'text/html; charset=utf-8';

const Token = Type.Object({ token: Type.String() });

/** A JSON client asked for JSON and not for a page (browsers' form posts always accept text/html). */
const wantsJson = (req: FastifyRequest) => {
  const accept = String(req.headers.accept ?? '');
  return /application\/json/i.test(accept) && !/text\/html/i.test(accept);
};

export async function reviewRoutes(fastify: FastifyInstance, deps: TemplatesDeps): Promise<void> {
  registerFeatureGate(
    fastify,
    createFeatureGate(() => migrationApplied(deps.db, '005-templates')),
    'review_unavailable',
    { message: 'Reviews are unavailable until this deployment’s database is migrated (signet migrate); retry later.' },
  );
  // Only here: the rest of the app takes JSON bodies only (request-shape.ts). The forms' fields are not used.
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_req, body, done) => done(null, querystring.parse(body as string)),
  );
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  /** The error as a page: the document's language when the link is known, else the browser's. */
  async function errorPage(
    req: FastifyRequest,
    reply: FastifyReply,
    token: string,
    action: ReviewAction,
    err: unknown,
  ) {
    const e = err instanceof ApiError ? err : null;
    if (!e || e.status >= 500) req.log.error({ err }, 'review page failed');
    const fallback = localeFromAcceptLanguage(req.headers['accept-language']);
    const locale =
      e?.name_ === 'not_found'
        ? fallback
        : await reviewView(deps, token).then(
            (v) => v.document.locale,
            () => fallback,
          );
    if (e?.headers) reply.headers(e.headers);
    return reply
      .code(e?.status ?? 500)
      .headers(REVIEW_PAGE_HEADERS)
      .type(HTML)
      .send(renderReviewError(app.assets, locale, token, action, e));
  }

  app.get('/review/:token', { schema: { hide: true, params: Token } }, async (req, reply) => {
    const { token } = req.params;
    try {
      const v = await reviewView(deps, token);
      return reply
        .headers(REVIEW_PAGE_HEADERS)
        .type(HTML)
        .send(renderReviewPage(app.assets, v, token));
    } catch (err) {
      return errorPage(req, reply, token, 'view', err);
    }
  });

  app.get('/review/:token/document.pdf', { schema: { hide: true, params: Token } }, async (req, reply) => {
    const pdf = await reviewPdf(deps, req.params.token);
    return reply
      .headers({ ...PRIVATE, 'x-content-type-options': 'nosniff' })
      .type('application/pdf')
      .send(Buffer.from(pdf));
  });

  const act =
    (action: 'confirm' | 'discard') =>
    async (req: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
      const { token } = req.params;
      const json = wantsJson(req);
      try {
        const who = { reviewToken: token };
        const out =
          action === 'confirm' ? await confirmInstance(deps, who, undefined) : await discardInstance(deps, who);
        if (json) return reply.headers(PRIVATE).send(out);
        return reply.headers(PRIVATE).redirect(reviewBase(token), 303);
      } catch (err) {
        if (json) throw err;
        return errorPage(req, reply, token, action, err);
      }
    };
  const opts = { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, params: Token } };
  app.post('/review/:token/confirm', opts, act('confirm'));
  app.post('/review/:token/discard', opts, act('discard'));
}
