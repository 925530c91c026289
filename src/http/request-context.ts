// What a request carries beyond Fastify's own: the /v1 gate's results and the client as the service records it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { normaliseAddress } from '../lib/ip.js';
import type { RateDecision } from '../ratelimit/ratelimit.js';
import { clientAddressResolver, type ClientAddressOf } from './trusted-proxies.js';

export type AuthContext = {
  /** The API key; null when a signed-in dashboard person acts (then `actor` names them). */
  keyId: string | null;
  /** Who the audit trail names when it is not the key, e.g. `user:<email>` (dashboard/people.service.ts actorOf). */
  actor?: string;
  /**
   * `region`: where the workspace's documents live (recorded at its creation); null or absent: none recorded.
   * `defaultLocale`: the language of what names none (migration 023); null or absent: English.
   */
  workspace: {
    id: string;
    name: string;
    slug: string;
    tier: string;
    region?: string | null;
    defaultLocale?: string | null;
  };
  allowedOrigins: string[];
};

/** `sealKey`: what the stored reply is encrypted under; derived from the API key's plaintext, never stored. */
export type IdempotencyClaim = { keyId: string; idemKey: string; sealKey: Buffer };

declare module 'fastify' {
  interface FastifyInstance {
    /** The one resolver of client addresses for this app (config.trustProxy). */
    clientAddressOf: ClientAddressOf;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
    rate: RateDecision | null;
    /**
     * The database change-probe reading the /v1 gate took for this request (null: none or unknown). Read
     * paths with exact caches may validate against it instead of probing again: it was taken after the request
     * arrived, so what it validates is never older than the request.
     */
    dataVersion: number | null;
    idem: IdempotencyClaim | null;
    rawBody: string | undefined;
  }
}

/** The authenticated context; only callable from routes behind the /v1 auth hook. */
/** The API key behind a request that only the /v1 gate lets through (never a dashboard person). */
export function apiKeyOf(auth: AuthContext): string {
  if (auth.keyId === null) throw new Error('an API-key action reached without an API key');
  return auth.keyId;
}

export function authOf(req: { auth: AuthContext | null }): AuthContext {
  if (!req.auth) throw new Error('route reached without authentication');
  return req.auth;
}

/** Declared once on the root instance, so every request object has the same shape. */
export function decorateRequests(app: FastifyInstance, trustedProxies: readonly string[]): void {
  app.decorate('clientAddressOf', clientAddressResolver(trustedProxies));
  app.decorateRequest('auth', null);
  app.decorateRequest('rate', null);
  app.decorateRequest('dataVersion', null);
  app.decorateRequest('idem', null);
  app.decorateRequest('rawBody', undefined);
}

/**
 * The client as audit trails record it: its address (`clientAddress`) and the User-Agent, and, for a
 * signer acting inside an embedding, the session and the origin that framed it.
 */
export type ClientMeta = {
  ip: string | null;
  userAgent: string | null;
  embedded?: { session_id: string; origin: string };
};

/**
 * The client's address as the service sees it: the socket's peer, or, when that peer is a trusted proxy
 * (TRUST_PROXY), the address it forwarded (http/trusted-proxies.ts). The IP allowlist, the masked last-used address,
 * the key-use audit, audit trails and per-address limits all take it from here.
 */
export const clientAddress = (req: FastifyRequest): string | undefined => req.server.clientAddressOf(req);

export const clientMeta = (req: FastifyRequest): ClientMeta => ({
  ip: normaliseAddress(clientAddress(req)),
  userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'].slice(0, 512) : null,
});
