// The /v1 gate, in the spec's order: key shape (before any lookup) → lookup by hash → revoked → IP allowlist on
// the socket's peer address (never a header) → tier → rate limit. Idempotency and the handler come after.
// `GET /v1/me` is authenticated but never touches the rate limiter.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { changeProbe, type Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { isAllowed, maskIp, normaliseAddress } from '../lib/ip.js';
import { createAuthLookup } from '../keys/auth-cache.js';
import { findKeyForAuth, hashKey, looksLikeKey } from '../keys/keys.repo.js';
import type { LastUsedRecorder } from '../keys/last-used.js';
import type { RateLimiter } from '../ratelimit/ratelimit.js';
import { DEFAULT_LIMIT } from '../ratelimit/ratelimit.js';
import { apiError } from './errors.js';

export const API_TIERS_WITHOUT_ACCESS = new Set(['free']);
const UNAUTHENTICATED = new Set(['/v1/openapi.json']);

export const isApiPath = (url: string): boolean => url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');

export function registerAuth(
  app: FastifyInstance,
  deps: { db: Db; clock: Clock; limiter: RateLimiter; lastUsed: LastUsedRecorder },
): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('rate', null);
  const keys = createAuthLookup({ load: (hash) => findKeyForAuth(deps.db.kysely, hash), probe: changeProbe(deps.db) });

  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (!isApiPath(req.url)) return;
    const path = req.url.split('?')[0]!;
    if (UNAUTHENTICATED.has(path)) return;

    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
    const token = m?.[1];
    if (!token || !looksLikeKey(token)) throw apiError('invalid_key');

    const key = await keys.find(hashKey(token));
    if (!key || key.revoked) throw apiError('invalid_key');

    const peer = req.socket.remoteAddress;
    if (key.allowedIps && !isAllowed(key.allowedIps, peer)) {
      throw apiError('ip_not_allowed', { ip: normaliseAddress(peer) });
    }

    const tier = key.workspace.tier;
    if (API_TIERS_WITHOUT_ACCESS.has(tier)) {
      throw apiError('tier_required', { message: `The ${tier} plan has no API access.`, meta: { tier } });
    }

    // Shared, frozen objects from the cache: handlers only read them.
    req.auth = { keyId: key.id, workspace: key.workspace, allowedOrigins: key.allowedOrigins as string[] };
    const now = deps.clock.now();
    deps.lastUsed.note(key.id, now, maskIp(peer));

    if (req.method === 'GET' && path === '/v1/me') return;
    const decision = await deps.limiter.hit(key.id, key.rateLimit ?? DEFAULT_LIMIT);
    req.rate = decision;
    if (!decision.allowed) {
      throw apiError('rate_limited', {
        headers: { 'Retry-After': String(decision.retryAfterSeconds ?? decision.resetSeconds) },
      });
    }
  });

  // RateLimit headers go on every 2xx and every 429, and on no other status. Callback-style: runs on every request.
  app.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void) => {
    const d = req.rate;
    if (d && ((reply.statusCode >= 200 && reply.statusCode < 300) || reply.statusCode === 429)) {
      reply.header('RateLimit-Limit', String(d.limit));
      reply.header('RateLimit-Remaining', String(d.remaining));
      reply.header('RateLimit-Reset', String(d.resetSeconds));
      reply.header('RateLimit-Policy', `${d.limit};w=60`);
    }
    done(null, payload);
  });
}
