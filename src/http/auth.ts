// The /v1 gate, in the spec's order: key shape (before any lookup) → lookup by hash → revoked → IP allowlist on
// the client's address (the socket's peer; a header only from a trusted proxy) → tier → rate limit. Idempotency and the handler come after.
// Registered inside the /v1 plugin, so it also runs for unknown /v1 paths (they count, as the spec says). A route
// opts out on its own: `config: { auth: false }` (no key at all) or `config: { rateLimit: false }` (GET /v1/me).
// Callback-style, and synchronous end to end when the key is cached and the limiter is in-process: this hook runs
// on every API request, and each promise it awaited cost measurable time there.
// The key-use audit: every /v1 request whose bearer value is a stored key (revoked, refused by the allowlist, the
// tier or the limit included) is noted at onResponse, in memory, with its status; keys/key-use.ts writes in batches.
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { maskIp, normaliseAddress } from '../lib/ip.js';
import { createAuthLookup, type AuthEntry } from '../keys/auth-cache.js';
import { findKeyForAuth, hashKey, looksLikeKey } from '../keys/keys.repo.js';
import type { KeyUseRecorder } from '../keys/key-use.js';
import type { LastUsedRecorder } from '../keys/last-used.js';
import type { RateDecision, RateLimiter } from '../ratelimit/ratelimit.js';
import { RATE_LIMIT, RATE_WINDOW_MS } from '../limits.js';
import { apiError } from '../lib/errors.js';
import { clientAddress } from './request-context.js';
import { migrationGate } from './feature-gate.js';

export const API_TIERS_WITHOUT_ACCESS = new Set(['free']);
const BEARER = /^Bearer +(\S+) *$/i;
const RATE_WINDOW_S = RATE_WINDOW_MS / 1000;
/** The key-use audit's route for a path no route matched: the raw URL may hold ids or junk and is never stored. */
export const UNKNOWN_ROUTE = '(unknown route)';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route needs no API key (the OpenAPI document). */
    auth?: false;
    /** false: authenticated, but exempt from the rate limit (GET /v1/me): no token used, no RateLimit headers. */
    rateLimit?: false;
  }
  interface FastifyRequest {
    /**
     * /v1 only, for the key-use audit: the key the request was made with, once the gate found it (even if it then
     * refused the request), when and from where (masked), and the route pattern (undefined: no route matched).
     */
    keyUsed: AuthEntry | null;
    keyUseAt: number;
    keyUseIp: string | null;
    keyUseRoute: string | undefined;
  }
}

/**
 * Per connection: the last Authorization value that passed the shape check, with its key hash, and the client's
 * masked address (recomputed when a trusted proxy forwards another client on the same connection), so a keep-alive
 * client sending one key is not parsed and hashed again on every request. Any other value is checked and hashed
 * afresh. The value lives no longer than the socket and is never logged.
 */
type Connection = { header: string | undefined; keyHash: string; address: string | undefined; masked: string | null };
const connections = new WeakMap<Socket, Connection>();

function connectionOf(req: FastifyRequest): Connection {
  const address = clientAddress(req);
  let c = connections.get(req.socket);
  if (c === undefined) {
    c = { header: undefined, keyHash: '', address, masked: maskIp(address) };
    connections.set(req.socket, c);
  } else if (c.address !== address) {
    c.address = address;
    c.masked = maskIp(address);
  }
  return c;
}

/** The key hash for this Authorization value, or null when it is not a bearer key of ours (no lookup then). */
function keyHashOf(conn: Connection, header: string | string[] | undefined): string | null {
  if (header === conn.header && header !== undefined) return conn.keyHash;
  const token = bearerOf(header);
  if (!token || !looksLikeKey(token)) return null;
  conn.header = header as string;
  conn.keyHash = hashKey(token);
  return conn.keyHash;
}

/** The bearer value of an Authorization header, if it has that form. */
export const bearerOf = (header: string | string[] | undefined): string | undefined =>
  typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;

type Done = (err?: Error) => void;

export function registerAuth(
  app: FastifyInstance,
  deps: { db: Db; clock: Clock; limiter: RateLimiter; lastUsed: LastUsedRecorder; keyUses: KeyUseRecorder },
): void {
  app.decorateRequest('keyUsed', null);
  app.decorateRequest('keyUseAt', 0);
  app.decorateRequest('keyUseIp', null);
  app.decorateRequest('keyUseRoute', undefined);
  // The workspace's region and default language are read once their columns exist (a server ahead of its schema
  // keeps serving). A change of either moves the change probe (workspaces is watched), so no entry outlives it.
  const region = migrationGate(deps.db, '022-workspace-face');
  const locale = migrationGate(deps.db, '023-default-locale');
  const keys = createAuthLookup({
    load: async (hash) =>
      findKeyForAuth(deps.db.kysely, hash, {
        region: await region.available(),
        defaultLocale: await locale.available(),
      }),
    probe: deps.db.probe,
  });

  function limited(req: FastifyRequest, decision: RateDecision, done: Done): void {
    req.rate = decision;
    if (decision.allowed) return done();
    done(
      apiError('rate_limited', {
        headers: { 'Retry-After': String(decision.retryAfterSeconds ?? decision.resetSeconds) },
      }),
    );
  }

  function admit(
    req: FastifyRequest,
    key: AuthEntry | undefined,
    conn: Connection,
    version: number | null,
    counted: boolean,
    done: Done,
  ): void {
    if (key === undefined) return done(apiError('invalid_key'));
    const now = deps.clock.now();
    req.keyUsed = key;
    req.keyUseAt = now;
    req.keyUseIp = conn.masked;
    if (key.revoked) return done(apiError('invalid_key'));

    if (key.allowIp && !key.allowIp(conn.address)) {
      return done(apiError('ip_not_allowed', { ip: normaliseAddress(conn.address) }));
    }

    const tier = key.workspace.tier;
    if (API_TIERS_WITHOUT_ACCESS.has(tier)) {
      return done(apiError('tier_required', { message: `The ${tier} plan has no API access.`, meta: { tier } }));
    }

    // Shared, frozen objects from the cache: handlers only read them.
    req.auth = { keyId: key.id, workspace: key.workspace, allowedOrigins: key.allowedOrigins as string[] };
    req.dataVersion = version;
    deps.lastUsed.note(key.id, now, conn.masked);

    if (!counted) return done();
    let decision: RateDecision | Promise<RateDecision>;
    try {
      decision = deps.limiter.hit(key.id, key.rateLimit ?? RATE_LIMIT);
    } catch (err) {
      return done(err as Error);
    }
    if (decision instanceof Promise) decision.then((d) => limited(req, d, done), done);
    else limited(req, decision, done);
  }

  app.addHook('onRequest', (req: FastifyRequest, _reply: FastifyReply, done: Done) => {
    const config = req.routeOptions.config;
    if (config.auth === false) return done();
    req.keyUseRoute = config.url;
    // The spec exempts GET /v1/me; the HEAD Fastify adds beside a GET still counts, as it always did.
    const counted = config.rateLimit !== false || req.method !== 'GET';

    const conn = connectionOf(req);
    const keyHash = keyHashOf(conn, req.headers.authorization);
    if (keyHash === null) return done(apiError('invalid_key'));

    const version = keys.version();
    const cached = keys.get(keyHash, version);
    if (cached !== undefined) return admit(req, cached, conn, version, counted, done);
    keys.load(keyHash, version).then((key) => admit(req, key, conn, version, counted, done), done);
  });

  // One key-use row per request made with a key, noted when the answer is out (its status known) with the time the
  // gate found the key; the write is batched elsewhere, never awaited here. Callback-style, allocation-free, and a
  // plain return for requests without a key.
  app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const key = req.keyUsed;
    if (key === null) return done();
    deps.keyUses.note(
      key.id,
      key.workspace.id,
      req.keyUseAt,
      req.keyUseIp,
      req.method,
      req.keyUseRoute ?? UNKNOWN_ROUTE,
      reply.statusCode,
    );
    done();
  });

  // RateLimit headers go on every 2xx and every 429, and on no other status. Callback-style: runs on every request.
  app.addHook(
    'onSend',
    (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void) => {
      const d = req.rate;
      if (d && ((reply.statusCode >= 200 && reply.statusCode < 300) || reply.statusCode === 429)) {
        reply.header('RateLimit-Limit', String(d.limit));
        reply.header('RateLimit-Remaining', String(d.remaining));
        reply.header('RateLimit-Reset', String(d.resetSeconds));
        reply.header('RateLimit-Policy', `${d.limit};w=${RATE_WINDOW_S}`);
      }
      done(null, payload);
    },
  );
}
