import type { RateDecision } from '../ratelimit/ratelimit.js';

export type AuthContext = {
  keyId: string;
  workspace: { id: string; name: string; slug: string; tier: string };
  allowedOrigins: string[];
};

export type IdempotencyClaim = { keyId: string; idemKey: string };

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    rate: RateDecision | null;
    /**
     * The database change-probe reading the /v1 gate took for this request (SQLite; null: none or unknown). Read
     * paths with exact caches may validate against it instead of probing again: it was taken after the request
     * arrived, so what it validates is never older than the request.
     */
    dataVersion: number | null;
    idem: IdempotencyClaim | null;
    rawBody: string | undefined;
  }
}

/** The authenticated context; only callable from routes behind the /v1 auth hook. */
export function authOf(req: { auth: AuthContext | null }): AuthContext {
  if (!req.auth) throw new Error('route reached without authentication');
  return req.auth;
}
