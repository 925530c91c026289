// The /v1 gate, in the spec's order: key shape (before any lookup) → lookup by hash → revoked → IP allowlist on
// the socket's peer address (never a header) → tier → rate limit. Idempotency and the handler come after.
// `GET /v1/me` is authenticated but never touches the rate limiter.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { safeEqual } from '../lib/crypto.js';
import { isAllowed, maskIp, normaliseAddress } from '../lib/ip.js';
import { findKeyForAuth, hashKey, looksLikeKey } from '../keys/keys.repo.js';
import type { LastUsedRecorder } from '../keys/last-used.js';
import type { RateDecision, RateLimiter } from '../ratelimit/ratelimit.js';
import { DEFAULT_LIMIT } from '../ratelimit/ratelimit.js';
import { apiError } from './errors.js';

export const API_TIERS_WITHOUT_ACCESS = new Set(['free']);
const UNAUTHENTICATED = new Set(['/v1/openapi.json']);

export const isApiPath = (url: string): boolean => url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSeconds),
    'RateLimit-Policy': `${d.limit};w=60`,
  };
}

export function registerAuth(
  app: FastifyInstance,
  deps: { db: Db; clock: Clock; limiter: RateLimiter; lastUsed: LastUsedRecorder },
): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('rate', null);

  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (!isApiPath(req.url)) return;
    const path = req.url.split('?')[0]!;
    if (UNAUTHENTICATED.has(path)) return;

    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
    const token = m?.[1];
    if (!token || !looksLikeKey(token)) throw apiError('invalid_key');

    const hash = hashKey(token);
    const key = await findKeyForAuth(deps.db.kysely, hash);
    if (!key || !safeEqual(key.key_hash, hash) || key.revoked_at !== null) throw apiError('invalid_key');

    const peer = req.socket.remoteAddress;
    const ips = key.allowed_ips === '[]' ? null : (JSON.parse(key.allowed_ips) as string[]);
    if (ips && !isAllowed(ips, peer)) {
      throw apiError('ip_not_allowed', { ip: normaliseAddress(peer) });
    }

    if (API_TIERS_WITHOUT_ACCESS.has(key.ws_tier)) {
      throw apiError('tier_required', {
        message: `The ${key.ws_tier} plan has no API access.`,
        meta: { tier: key.ws_tier },
      });
    }

    req.auth = {
      keyId: key.id,
      workspace: { id: key.workspace_id, name: key.ws_name, slug: key.ws_slug, tier: key.ws_tier },
      allowedOrigins: JSON.parse(key.allowed_origins) as string[],
    };
    const now = deps.clock.now();
    deps.lastUsed.note(key.id, now, maskIp(peer));

    if (req.method === 'GET' && path === '/v1/me') return;
    const decision = await deps.limiter.hit(key.id, key.rate_limit ?? DEFAULT_LIMIT);
    req.rate = decision;
    if (!decision.allowed) {
      throw apiError('rate_limited', {
        headers: { 'Retry-After': String(decision.retryAfterSeconds ?? decision.resetSeconds) },
      });
    }
  });

  // RateLimit headers go on every 2xx and every 429, and on no other status.
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload) => {
    const d = req.rate;
    if (d && ((reply.statusCode >= 200 && reply.statusCode < 300) || reply.statusCode === 429)) {
      reply.headers(rateLimitHeaders(d));
    }
    return payload;
  });
}
