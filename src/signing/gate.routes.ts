// The verification gate's two actions under a signer page's base (/sign/<token> and /embed/sign/<token>): send a
// code, check a code. A plain form (application/x-www-form-urlencoded, parsed only in this plugin) gets a 303 back
// to the page with `?v=` naming the outcome, so the gate works without JavaScript; a JSON client gets JSON or the
// catalogue error. Routes only wire: the rules are verification.service.ts.
import querystring from 'node:querystring';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ClientMeta } from '../http/request-context.js';
import { ApiError } from '../lib/errors.js';
import type { GateNotice } from './page/gate-page.js';
import type { RequestRow } from './signing.repo.js';
import { TokenParam } from './signer.schemas.js';
import type { SigningDeps } from './signing.service.js';
import { checkCode, sendCode } from './verification.service.js';

const FORM_BODY_LIMIT = 4 * 1024;
const NOTICES: Record<string, GateNotice> = {
  verification_code_invalid: 'wrong',
  verification_code_expired: 'expired',
  verification_locked: 'locked',
  verification_no_code: 'no_code',
};

export type GateResolver = (req: FastifyRequest, token: string) => Promise<{ r: RequestRow; meta: ClientMeta }>;

/** `pagePath` (not `prefix`, which Fastify would apply to every route): the page's path with `:token` (the base the page's forms post under). */
export async function gateRoutes(
  fastify: FastifyInstance,
  o: { deps: SigningDeps; pagePath: string; resolve: GateResolver },
): Promise<void> {
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_req, body, done) => done(null, querystring.parse(body as string)),
  );
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const isForm = (req: FastifyRequest) =>
    (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
  const pageOf = (_req: FastifyRequest, token: string) => o.pagePath.replace(':token', encodeURIComponent(token));

  /** A form's outcome as a 303 to the page; JSON clients get the error itself. */
  function back(req: FastifyRequest, reply: FastifyReply, token: string, err: unknown) {
    if (!isForm(req) || !(err instanceof ApiError)) throw err;
    let v: string | undefined = NOTICES[err.code];
    if (err.code === 'verification_send_limit') {
      const seconds = Number((err.meta as { retry_after_seconds?: number } | undefined)?.retry_after_seconds);
      v = Number.isFinite(seconds) ? `limit&m=${Math.ceil(seconds / 60)}` : 'limit_total';
    }
    // Anything else (the request closed, expired, the link unknown): the page itself says so.
    return reply
      .code(303)
      .header('location', v ? `${pageOf(req, token)}?v=${v}` : pageOf(req, token))
      .send();
  }

  const opts = { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, params: TokenParam } };
  app.post(`${o.pagePath}/verification/send`, opts, async (req, reply) => {
    try {
      const { r, meta } = await o.resolve(req, req.params.token);
      const out = await sendCode(o.deps, r, meta);
      if (!isForm(req)) return out;
      const v = out.status === 'sent' ? '?v=sent' : '';
      return reply
        .code(303)
        .header('location', `${pageOf(req, req.params.token)}${v}`)
        .send();
    } catch (err) {
      return back(req, reply, req.params.token, err);
    }
  });

  app.post(`${o.pagePath}/verification/check`, opts, async (req, reply) => {
    try {
      const body = (req.body ?? {}) as { code?: unknown };
      const code = typeof body.code === 'string' ? body.code.slice(0, 32) : '';
      const { r, meta } = await o.resolve(req, req.params.token);
      const out = await checkCode(o.deps, r, code, meta);
      if (!isForm(req)) return out;
      return reply.code(303).header('location', pageOf(req, req.params.token)).send();
    } catch (err) {
      return back(req, reply, req.params.token, err);
    }
  });
}
