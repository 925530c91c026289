// The local CA's public side, named by the CRL distribution point and authority information access of every
// certificate it issues: no key, cacheable, per-address limited like every key-less route.
import type { FastifyInstance } from 'fastify';
import type { TrustStore } from '../pki/trust.js';

const ONE_HOUR_S = 3600;

export async function trustRoutes(app: FastifyInstance, deps: { trust: TrustStore }): Promise<void> {
  app.get('/pki/ca.crt', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('application/pkix-cert')
      .header('cache-control', `public, max-age=${24 * ONE_HOUR_S}`)
      .send(Buffer.from(await deps.trust.caCertDer())),
  );
  app.get('/pki/crl', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('application/pkix-crl')
      .header('cache-control', `public, max-age=${ONE_HOUR_S}`)
      .send(Buffer.from(await deps.trust.currentCrl())),
  );
}
