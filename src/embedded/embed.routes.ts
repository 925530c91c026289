// The framed signing page under /embed/sign/<session token> and the host pages' helper /embed/signet.js, registered
// in app.ts's `keyless` plugin (per-address limit; no API key, never an IP allowlist: spec Authentication rule 7).
// The page is framable by its session's origin only (CSP frame-ancestors, no X-Frame-Options); an unknown token's
// page by nobody. Actions are the e-mail link's (signing.service.ts) on the session's request.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { SIGN_BODY_LIMIT } from '../limits.js';
import { clientMeta } from '../http/request-context.js';
import { renderClosedPage, renderSignerPage, signerPageHeaders } from '../signing/page/signer-page.js';
import { gateRoutes } from '../signing/gate.routes.js';
import { gateDoc, gateNoticeOf, renderGatePage } from '../signing/page/gate-page.js';
import { DeclineBody, SignBody, TokenParam } from '../signing/signer.schemas.js';
import { needsVerification } from '../signing/verification.js';
import { gateView } from '../signing/verification.service.js';
import { declineRequest, signerPdf, signRequest, viewRequest, type SigningDeps } from '../signing/signing.service.js';
import { actingSession, embedView } from './sessions.service.js';
import { bridgeData, endedEvent } from './bridge.js';

const PRIVATE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
/** signet.js is loaded by a fixed URL: cached an hour, then revalidated. */
const HELPER_MAX_AGE_SECONDS = 3600;

export async function embedRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const hide = { hide: true, params: TokenParam };

  app.get('/embed/signet.js', { schema: { hide: true } }, async (req, reply) =>
    app.assets.sendUnversioned('signet.js', req, reply, HELPER_MAX_AGE_SECONDS),
  );
  app.get('/embed/signet.d.ts', { schema: { hide: true } }, async (req, reply) =>
    app.assets.sendUnversioned('signet.d.ts', req, reply, HELPER_MAX_AGE_SECONDS),
  );

  app.get('/embed/sign/:token', { schema: hide }, async (req, reply) => {
    reply.type('text/html; charset=utf-8');
    let v: Awaited<ReturnType<typeof embedView>>;
    try {
      v = await embedView(deps, req.params.token);
    } catch (err) {
      if ((err as { code?: string }).code !== 'not_found') throw err;
      return reply
        .code(404)
        .headers(signerPageHeaders())
        .send(renderClosedPage(app.assets, 'en', 'not_found'));
    }
    reply.headers(signerPageHeaders(v.session.origin));
    const script = app.assets.url('embed-bridge.js');
    const base = `/embed/sign/${encodeURIComponent(req.params.token)}`;
    if (v.state === 'open' && needsVerification(v.view.request)) {
      const q = req.query as Record<string, unknown>;
      const doc = { ...gateDoc(v.view), locale: v.session.locale };
      return renderGatePage(app.assets, doc, await gateView(deps, v.view.request), {
        base,
        notice: gateNoticeOf(q.v),
        waitMinutes: Number(q.m) || undefined,
        bridge: { script, data: bridgeData(v.session, null), endsInMs: v.endsInMs },
      });
    }
    if (v.state === 'open') {
      const view = { ...v.view, document: { ...v.view.document, locale: v.session.locale } };
      return renderSignerPage(app.assets, view, {
        base,
        bridge: { script, data: bridgeData(v.session, null), endsInMs: v.endsInMs },
      });
    }
    return renderClosedPage(app.assets, v.session.locale, v.state, {
      ended: true,
      brand: v.view.brand,
      bridge: { script, data: bridgeData(v.session, endedEvent(v.state, v.request)) },
    });
  });

  // An action through the session is the signer's own, recorded with the session and its origin.
  const acting = async (req: FastifyRequest, token: string) => {
    const s = await actingSession(deps, token);
    return {
      r: s.request,
      meta: { ...clientMeta(req), embedded: { session_id: s.session.id, origin: s.session.origin } },
    };
  };

  await app.register(gateRoutes, { deps, pagePath: '/embed/sign/:token', resolve: acting });

  app.get('/embed/sign/:token/document.pdf', { schema: hide }, async (req, reply) => {
    const pdf = await signerPdf(deps, (await acting(req, req.params.token)).r);
    return reply.headers(PRIVATE).type('application/pdf').send(Buffer.from(pdf));
  });

  app.post('/embed/sign/:token/view', { schema: hide }, async (req) => {
    const a = await acting(req, req.params.token);
    return viewRequest(deps, a.r, a.meta);
  });

  app.post(
    '/embed/sign/:token/sign',
    { bodyLimit: SIGN_BODY_LIMIT, schema: { ...hide, body: SignBody } },
    async (req) => {
      const a = await acting(req, req.params.token);
      return signRequest(deps, a.r, req.body, a.meta);
    },
  );

  app.post('/embed/sign/:token/decline', { schema: { ...hide, body: DeclineBody } }, async (req) => {
    const a = await acting(req, req.params.token);
    return declineRequest(deps, a.r, req.body.reason, a.meta);
  });
}
