// The signer's copy under /copy/<token>: a page listing the sealed PDF and the audit certificate, and the two files.
// Registered in app.ts's `keyless` plugin (no API key; the per-address limit applies); the unguessable token is the
// credential. Wiring only: the rules are in copy.service.ts, the HTML in page/copy-page.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { localeOrDefault } from '../i18n/i18n.js';
import { ApiError } from '../lib/errors.js';
import { localeFromAcceptLanguage } from '../web/html.js';
import { copyAuditCertificate, copyPdf, copyView, type CopyView } from './copy.service.js';
import { COPY_PAGE_HEADERS, copyPageHeaders, renderCopyGone, renderCopyPage } from './page/copy-page.js';
import { TokenParam } from './signer.schemas.js';
import type { SigningDeps } from './signing.service.js';

const HTML = 'text/html; charset=utf-8';
const FILE_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** A browser following a link gets a page it can read; other clients the catalogue's JSON. */
const wantsHtml = (req: FastifyRequest) => /text\/html/i.test(String(req.headers.accept ?? ''));
const isNotFound = (err: unknown) => err instanceof ApiError && err.name_ === 'not_found';

export async function copyRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  /** The visitor's language; the document's when the browser names none we have. */
  const localeOf = (req: FastifyRequest, documentLocale = 'en') =>
    localeFromAcceptLanguage(req.headers['accept-language'], localeOrDefault(documentLocale));
  /** 404 as a page: an expired link says so and whom to ask, anything else is "not valid". */
  const gone = (req: FastifyRequest, reply: FastifyReply, v: CopyView | null) =>
    reply
      .code(404)
      .headers(COPY_PAGE_HEADERS)
      .type(HTML)
      .send(
        v
          ? renderCopyGone(app.assets, localeOf(req, v.document.locale), 'expired', v.workspaceName)
          : renderCopyGone(app.assets, localeOf(req), 'not_found'),
      );
  const viewOrNull = (token: string) =>
    copyView(deps, token).catch((err: unknown) => {
      if (isNotFound(err)) return null;
      throw err;
    });

  app.get('/copy/:token', { schema: { hide: true, params: TokenParam } }, async (req, reply) => {
    const v = await viewOrNull(req.params.token);
    if (!v || v.state === 'expired') return gone(req, reply, v);
    return reply
      .headers(copyPageHeaders(v.brand))
      .type(HTML)
      .send(
        renderCopyPage(
          app.assets,
          localeOf(req, v.document.locale),
          v,
          `/copy/${encodeURIComponent(req.params.token)}`,
        ),
      );
  });

  /** One of the two files; an unusable link is the page for a browser, the catalogue's 404 for anything else. */
  const file =
    (read: (d: SigningDeps, token: string) => Promise<{ disposition: string; pdf: Uint8Array }>) =>
    async (req: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
      try {
        const f = await read(deps, req.params.token);
        return reply
          .headers(FILE_HEADERS)
          .header('content-disposition', f.disposition)
          .type('application/pdf')
          .send(Buffer.from(f.pdf));
      } catch (err) {
        if (isNotFound(err) && wantsHtml(req)) return gone(req, reply, await viewOrNull(req.params.token));
        throw err;
      }
    };
  app.get('/copy/:token/document.pdf', { schema: { hide: true, params: TokenParam } }, file(copyPdf));
  app.get('/copy/:token/audit-trail.pdf', { schema: { hide: true, params: TokenParam } }, file(copyAuditCertificate));
}
