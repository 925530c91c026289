// The local CAs' public side, named by the CRL distribution point and authority information access of every
// certificate they issue (pki/generate.ts, publishedPaths): no key, cacheable, per-address limited like every
// key-less route. The first generation keeps the short paths; later ones are numbered.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { apiError } from '../lib/errors.js';
import type { TrustStore } from '../pki/trust.js';

const ONE_HOUR_S = 3600;

export async function trustRoutes(app: FastifyInstance, deps: { trust: TrustStore }): Promise<void> {
  const send = (reply: FastifyReply, type: string, maxAge: number, der: Uint8Array | null) => {
    if (!der) throw apiError('not_found');
    return reply.type(type).header('cache-control', `public, max-age=${maxAge}`).send(Buffer.from(der));
  };
  const cert = (reply: FastifyReply, n: number) =>
    deps.trust.caCertDer(n).then((der) => send(reply, 'application/pkix-cert', 24 * ONE_HOUR_S, der));
  const crl = (reply: FastifyReply, n: number) =>
    deps.trust.currentCrl(n).then((der) => send(reply, 'application/pkix-crl', ONE_HOUR_S, der));
  const Gen = { type: 'object', properties: { n: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' } }, required: ['n'] };

  app.get('/pki/ca.crt', { schema: { hide: true } }, (_req, reply) => cert(reply, 1));
  app.get('/pki/crl', { schema: { hide: true } }, (_req, reply) => crl(reply, 1));
  app.get<{ Params: { n: string } }>('/pki/ca/:n.crt', { schema: { hide: true, params: Gen } }, (req, reply) =>
    cert(reply, Number(req.params.n)),
  );
  app.get<{ Params: { n: string } }>('/pki/crl/:n', { schema: { hide: true, params: Gen } }, (req, reply) =>
    crl(reply, Number(req.params.n)),
  );
}
