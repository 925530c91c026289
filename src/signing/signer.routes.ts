// Signer-facing endpoints under /sign/<token>. No API key and no IP allowlist (the spec never gates signing pages);
// the unguessable token is the credential. Acting on a request that is not open answers 409 request_not_signable.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { SIGN_BODY_LIMIT } from '../limits.js';
import { clientMeta } from '../http/request-context.js';
import { errorResponses } from '../http/schemas.js';
import { gateDoc, gateNoticeOf, renderGatePage } from './page/gate-page.js';
import { renderClosedPage, renderSignerPage, signerPageHeaders } from './page/signer-page.js';
import { gateRoutes } from './gate.routes.js';
import { assertVerified, needsVerification } from './verification.js';
import { gateView } from './verification.service.js';
import { downloadName, presentSignerInfo } from './presenters.js';
import { DeclineBody, SignBody, SignerActionOut, TokenParam } from './signer.schemas.js';
import {
  declineRequest,
  offersSealed,
  requestByToken,
  signerPdf,
  signerView,
  signRequest,
  viewRequest,
  type SigningDeps,
} from './signing.service.js';

// E-mail-link pages are never framed (only an embed session's page is, by its own origin) nor leak the token.
const PAGE_HEADERS = signerPageHeaders();
const PRIVATE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

export async function signerRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Signer'];

  app.get('/sign/:token', { schema: { hide: true, params: TokenParam } }, async (req, reply) => {
    reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8');
    try {
      const v = await signerView(deps, await requestByToken(deps, req.params.token));
      const base = `/sign/${encodeURIComponent(req.params.token)}`;
      if (v.state === 'open' && needsVerification(v.request)) {
        const q = req.query as Record<string, unknown>;
        return renderGatePage(app.assets, gateDoc(v), await gateView(deps, v.request), {
          base,
          notice: gateNoticeOf(q.v),
          waitMinutes: Number(q.m) || undefined,
        });
      }
      if (v.state === 'open')
        return renderSignerPage(app.assets, v, {
          base,
          ...(v.document.signature_level === 'qes' ? { qes: { provider: deps.qesProvider ?? '' } } : {}),
        });
      if (v.state === 'signed' && offersSealed(v.document))
        return renderClosedPage(app.assets, v.document.locale, v.state, {
          download: { href: `${base}/document.pdf`, fileName: downloadName(v.document, 'signed') },
          brand: v.brand,
        });
      return renderClosedPage(app.assets, v.document.locale, v.state, { brand: v.brand });
    } catch (err) {
      if ((err as { code?: string }).code === 'not_found')
        return reply.code(404).send(renderClosedPage(app.assets, 'en', 'not_found'));
      throw err;
    }
  });

  app.get(
    '/sign/:token/info',
    {
      schema: {
        tags,
        summary: 'What the signing page shows: document, signer, own fields, state.',
        params: TokenParam,
      },
    },
    async (req, reply) => {
      const v = await signerView(deps, await requestByToken(deps, req.params.token));
      assertVerified(v.request);
      reply.headers(PRIVATE);
      return presentSignerInfo(v);
    },
  );

  app.get('/sign/:token/document.pdf', { schema: { hide: true, params: TokenParam } }, async (req, reply) => {
    const pdf = await signerPdf(deps, await requestByToken(deps, req.params.token));
    return reply.headers(PRIVATE).type('application/pdf').send(Buffer.from(pdf));
  });

  await app.register(gateRoutes, {
    deps,
    pagePath: '/sign/:token',
    resolve: async (req, token) => ({ r: await requestByToken(deps, token), meta: clientMeta(req) }),
  });

  app.post(
    '/sign/:token/view',
    {
      schema: {
        tags,
        summary: 'The page rendered: pending → viewed (signing_request.viewed, once).',
        params: TokenParam,
        response: { 200: SignerActionOut, ...errorResponses(404, 409) },
      },
    },
    async (req) => viewRequest(deps, await requestByToken(deps, req.params.token), clientMeta(req)),
  );

  app.post(
    '/sign/:token/sign',
    {
      bodyLimit: SIGN_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Sign with a typed or drawn signature (signing_request.signed).',
        params: TokenParam,
        body: SignBody,
        response: { 200: SignerActionOut, ...errorResponses(400, 404, 409, 413, 422) },
      },
    },
    async (req) => signRequest(deps, await requestByToken(deps, req.params.token), req.body, clientMeta(req)),
  );

  app.post(
    '/sign/:token/decline',
    {
      schema: {
        tags,
        summary: 'Decline with a reason (signing_request.declined); the document is declined.',
        params: TokenParam,
        body: DeclineBody,
        response: { 200: SignerActionOut, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => declineRequest(deps, await requestByToken(deps, req.params.token), req.body.reason, clientMeta(req)),
  );
}
