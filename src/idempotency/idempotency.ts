// Idempotency-Key on POST/DELETE under /v1, scoped to the API key, kept 24 h. Runs after the rate limit (so a 429
// never consumes a key) and before validation and the handler. 2xx and 4xx outcomes are stored and replayed with
// `Idempotent-Replayed: true`; 5xx, 409 idempotency_in_progress and 429 are not stored (the key is released).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { apiError } from '../http/errors.js';
import { beginIdempotent, completeIdempotent, releaseIdempotent } from './idempotency.repo.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const LOCK_MS = 120_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export function registerIdempotency(app: FastifyInstance, deps: { db: Db; clock: Clock }): void {
  app.decorateRequest('idem', null);

  app.addHook('preValidation', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!req.auth || (req.method !== 'POST' && req.method !== 'DELETE')) return;
    const raw = req.headers['idempotency-key'];
    if (raw === undefined) return;
    const idemKey = Array.isArray(raw) ? raw[0] : raw;
    if (!idemKey || !KEY_SHAPE.test(idemKey)) {
      throw apiError('invalid_request', {
        message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
        meta: { field: 'Idempotency-Key' },
      });
    }
    const path = req.url.split('?')[0]!;
    const fingerprint = sha256Hex(`${req.method} ${path}\n${req.rawBody ?? ''}`);
    const claim = { keyId: req.auth.keyId, idemKey };
    const r = await beginIdempotent(deps.db.kysely, { ...claim, fingerprint }, deps.clock.now(), {
      lockMs: LOCK_MS,
      ttlMs: IDEMPOTENCY_TTL_MS,
    });
    switch (r.kind) {
      case 'acquired':
        req.idem = claim;
        return;
      case 'mismatch':
        throw apiError('idempotency_key_reused');
      case 'in_progress':
        throw apiError('idempotency_in_progress', { headers: { 'Retry-After': String(r.retryAfterSeconds) } });
      case 'replay':
        reply.code(r.status).header('Idempotent-Replayed', 'true');
        if (r.contentType) reply.header('content-type', r.contentType);
        return reply.send(r.body === '' ? undefined : r.body);
    }
  });

  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload) => {
    const claim = req.idem;
    if (!claim) return payload;
    req.idem = null;
    const status = reply.statusCode;
    if (status >= 500 || status === 429) {
      await releaseIdempotent(deps.db.kysely, claim);
    } else {
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
      const ct = reply.getHeader('content-type');
      await completeIdempotent(deps.db.kysely, claim, {
        status,
        body,
        contentType: typeof ct === 'string' ? ct : null,
      });
    }
    return payload;
  });

  // A request whose response never got sent (socket closed mid-handler) must not hold its key for the lock time.
  app.addHook('onResponse', async (req: FastifyRequest) => {
    if (req.idem) {
      const claim = req.idem;
      req.idem = null;
      await releaseIdempotent(deps.db.kysely, claim).catch(() => undefined);
    }
  });
}
