// Routes of the qualified signer's ceremony (wiring only; ceremony.ts and callback.ts hold the rules): the signer
// page's start action under their link, and the provider's redirect back. Without a configured provider the start
// answers 503 qes_unavailable and the callback the "no longer valid" page (400): no ceremony can exist.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SIGN_BODY_LIMIT } from '../limits.js';
import { apiError } from '../lib/errors.js';
import { clientMeta } from '../http/request-context.js';
import { errorResponses } from '../http/schemas.js';
import { SignBody, TokenParam } from '../signing/signer.schemas.js';
import { pageHeaders } from '../web/headers.js';
import { localeFromAcceptLanguage } from '../web/html.js';
import type { SigningDeps } from '../signing/signing.service.js';
import { clearCookie, COOKIE, startCeremony } from './ceremony.js';
import { handleCallback } from './callback.js';
import type { QesService } from './landing.js';
import { renderQesResultPage } from './page/qes-pages.js';

// The result pages load only the signer stylesheet; never framed.
const PAGE_HEADERS = pageHeaders({ csp: { frameAncestors: ['none'] }, noSniff: true, noIndex: true });
const PRIVATE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

const StartOut = Type.Object({
  redirect_url: Type.String({ description: 'The provider’s authorization page; the signer’s browser goes there.' }),
});

const cookieOf = (header: string | undefined): string | undefined =>
  header
    ?.split(';')
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${COOKIE}=`))
    ?.slice(COOKIE.length + 1) || undefined;

export async function qesRoutes(
  fastify: FastifyInstance,
  opts: SigningDeps & { qes: QesService | null },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const qes = opts.qes;
  const deps = qes ? { ...opts, qes } : null;

  app.post(
    '/sign/:token/qes/start',
    {
      bodyLimit: SIGN_BODY_LIMIT,
      schema: {
        tags: ['Signer'],
        summary: 'A qualified signer’s values are checked; answers where their provider’s authorization starts.',
        params: TokenParam,
        body: SignBody,
        response: { 200: StartOut, ...errorResponses(400, 404, 409, 413, 422, 503) },
      },
    },
    async (req, reply) => {
      if (!deps) throw apiError('qes_unavailable');
      const out = await startCeremony(deps, req.params.token, req.body, clientMeta(req));
      reply.headers(PRIVATE).header('set-cookie', out.cookie);
      return { redirect_url: out.redirect_url };
    },
  );

  app.get('/qes/callback', { schema: { hide: true } }, async (req, reply) => {
    reply.headers(PAGE_HEADERS).headers(PRIVATE);
    const q = req.query as Record<string, unknown>;
    const query = Object.fromEntries(
      ['state', 'code', 'error'].map((k) => [
        k,
        typeof q[k] === 'string' ? (q[k] as string).slice(0, 2048) : undefined,
      ]),
    );
    // Without a provider no ceremony can exist, so no callback can be valid.
    if (!deps)
      return reply
        .code(400)
        .type('text/html; charset=utf-8')
        .send(
          renderQesResultPage(app.assets, localeFromAcceptLanguage(req.headers['accept-language']), 'ceremony_expired'),
        );
    const answer = await handleCallback(deps, query, cookieOf(req.headers.cookie), clientMeta(req));
    if (answer.kind === 'redirect') {
      reply.header('set-cookie', answer.cookie ?? clearCookie(deps));
      return reply.redirect(answer.url, 303);
    }
    if (answer.clearCookie) reply.header('set-cookie', clearCookie(deps));
    const locale = answer.locale ?? localeFromAcceptLanguage(req.headers['accept-language']);
    return reply
      .code(answer.status)
      .type('text/html; charset=utf-8')
      .send(
        renderQesResultPage(app.assets, locale, answer.outcome, {
          retryHref: answer.retryHref,
          provider: (await deps.qes.info().catch(() => null))?.name,
        }),
      );
  });
}
