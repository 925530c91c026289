// Idempotency-Key on POST/DELETE under /v1, scoped to the API key, kept 24 h. Runs after the rate limit (so a 429
// never consumes a key) and before validation and the handler. 2xx and 4xx outcomes are stored and replayed with
// `Idempotent-Replayed: true`; 5xx, 409 idempotency_in_progress and 429 are not stored (the key is released).
// A stored reply can hold what is shown once (a hook's secret, an embed session's URL), so it is kept encrypted
// (AES-256-GCM) under a key derived from the caller's API key plaintext, which the database never holds: a copy of
// the database replays nothing, and only a caller presenting the same API key gets the reply back.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { createHmac } from 'node:crypto';
import { openText, sealText, sha256Hex } from '../lib/crypto.js';
import { bearerOf } from '../http/auth.js';
import { apiError } from '../lib/errors.js';
import { apiKeyOf, type IdempotencyClaim } from '../http/request-context.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_MS } from '../limits.js';
import { pruneJob, type PruneDeps } from '../jobs/prune.js';
import { beginIdempotent, completeIdempotent, IDEMPOTENCY_PRUNE, releaseIdempotent } from './idempotency.repo.js';

const LOCK_MS = 120_000;
const KEY_SHAPE = new RegExp(`^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

const sealKeyOf = (apiKey: string, idemKey: string): Buffer =>
  createHmac('sha256', apiKey).update(`signet idempotent reply\n${idemKey}`).digest();

/** The stored reply in clear; rows written before replies were sealed are plain text. */
function replayBody(key: Buffer, stored: string): string {
  const opened = openText(key, stored);
  if (opened !== null) return opened;
  if (stored.startsWith('enc1:')) throw new Error('idempotent reply does not open with this key');
  return stored;
}

export function registerIdempotency(app: FastifyInstance, deps: { db: Db; clock: Clock }): void {
  async function claim(req: FastifyRequest, reply: FastifyReply, raw: string | string[]): Promise<void> {
    const idemKey = Array.isArray(raw) ? raw[0] : raw;
    if (!idemKey || !KEY_SHAPE.test(idemKey)) {
      throw apiError('invalid_request', {
        message: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters.`,
        meta: { field: 'Idempotency-Key' },
      });
    }
    // The query is part of the request (`?dry_run=true` is not the send); without one this is the bare path.
    const fingerprint = sha256Hex(`${req.method} ${req.url}\n${req.rawBody ?? ''}`);
    const claim = {
      keyId: apiKeyOf(req.auth!),
      idemKey,
      sealKey: sealKeyOf(bearerOf(req.headers.authorization)!, idemKey),
    };
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
        reply.send(r.body === '' ? undefined : replayBody(claim.sealKey, r.body));
        return;
    }
  }

  // The three hooks run on every request, so they are callback-style and finish synchronously when there is
  // nothing to do (GETs, no Idempotency-Key): an async hook costs a promise and extra ticks even when empty.
  app.addHook('preValidation', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const raw = req.headers['idempotency-key'];
    if (!req.auth || (req.method !== 'POST' && req.method !== 'DELETE') || raw === undefined) return done();
    // After a replay the reply is sent; done() then ends the chain exactly as an async hook's resolution would.
    claim(req, reply, raw).then(() => done(), done);
  });

  async function finish(reply: FastifyReply, claim: IdempotencyClaim, payload: unknown): Promise<void> {
    const status = reply.statusCode;
    if (status >= 500 || status === 429) {
      await releaseIdempotent(deps.db.kysely, claim);
    } else {
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
      const ct = reply.getHeader('content-type');
      await completeIdempotent(deps.db.kysely, claim, {
        status,
        body: body === '' ? '' : sealText(claim.sealKey, body),
        contentType: typeof ct === 'string' ? ct : null,
      });
    }
  }

  app.addHook(
    'onSend',
    (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, p?: unknown) => void) => {
      const claim = req.idem;
      if (!claim) return done(null, payload);
      req.idem = null;
      finish(reply, claim, payload).then(() => done(null, payload), done);
    },
  );

  // A request whose response never got sent (socket closed mid-handler) must not hold its key for the lock time.
  app.addHook('onResponse', (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const claim = req.idem;
    if (!claim) return done();
    req.idem = null;
    releaseIdempotent(deps.db.kysely, claim).then(
      () => done(),
      () => done(),
    );
  });
}

/** Hourly: keys past their retention (24 hours by default, never less) are forgotten. */
export const pruneIdempotencyJob = (deps: PruneDeps): ScheduledJob =>
  pruneJob(deps, { targets: [IDEMPOTENCY_PRUNE], retention: 'idempotencyMs' });
