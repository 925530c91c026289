// Webhook delivery worker. Guarantees:
// - At least once: a delivery leaves `pending` only through a recorded 2xx or its 7th recorded failure. A worker
//   that dies mid-delivery leaves a claim that expires; another worker then claims and sends it again.
// - No double record: an outcome is written only while this worker still holds the claim it sent under.
// - A live worker never sends on a claim that could expire before the request's timeout (lease > timeout).
// - No transaction is open across an HTTP call. Redirects are never followed. A response counts only when it is
//   complete within timeoutMs; each attempt is signed afresh with `t` taken at send time.
import { performance } from 'node:perf_hooks';
import { request, type Dispatcher as HttpDispatcher } from 'undici';
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { createGuardedAgent } from '../lib/outbound.js';
import {
  claimDue,
  recordOutcomes,
  type AttemptOutcome,
  type ClaimedDelivery,
  type Outcome,
} from './deliveries.repo.js';
import { DELIVERY_TIMEOUT_MS, nextAttemptAt } from './schedule.js';
import { deliveryHeaders } from './signature.js';

export const DEFAULT_LEASE_MS = 60_000;
/** Characters of a response body kept for the record; the rest is never buffered. */
export const RESPONSE_BODY_LIMIT = 2048;
// Headroom between the request timeout and the claim's expiry for recording the outcome.
const LEASE_MARGIN_MS = 1_000;
const ERROR_LIMIT = 500;
// Group commit: wait at most this long, or for this many outcomes, before writing a transaction.
const LINGER_MS = 5;
const LINGER_MAX = 100;

export type Logger = {
  info(o: object, m?: string): void;
  warn(o: object, m?: string): void;
  error(o: object, m?: string): void;
};

export type DispatcherOptions = {
  db: Db;
  clock: Clock;
  /** Unique per process, e.g. `${hostname}:${pid}:${random}`; claims are owned by it. */
  workerId: string;
  /** undici dispatcher; defaults to a guarded agent that refuses non-public addresses unless allowed. */
  agent?: HttpDispatcher;
  allowPrivateNetwork: boolean;
  timeoutMs?: number;
  leaseMs?: number;
  batchSize?: number;
  concurrency?: number;
  /** Real-time sleep of the background loop when nothing was due. */
  pollIntervalMs?: number;
  logger?: Logger;
};

export type Dispatcher = {
  /** Claims and delivers everything due now, batch by batch; resolves with the number of HTTP attempts made. */
  runOnce(): Promise<number>;
  /** Background loop: runOnce, then an unref'd sleep of pollIntervalMs whenever nothing was due. */
  start(): void;
  /** Ends the background loop's sleep now (new work was written). */
  wake(): void;
  /** Final: stops claiming, hands back claimed rows not yet sent, waits for in-flight deliveries and their records. */
  stop(): Promise<void>;
};

const silent: Logger = { info() {}, warn() {}, error() {} };

class DeliveryTimeout extends Error {}

export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const { db, clock, workerId } = opts;
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const batchSize = opts.batchSize ?? 200;
  const concurrency = opts.concurrency ?? 64;
  const pollIntervalMs = opts.pollIntervalMs ?? 250;
  const logger = opts.logger ?? silent;
  if (leaseMs < timeoutMs + LEASE_MARGIN_MS) {
    throw new Error(`leaseMs (${leaseMs}) must exceed timeoutMs (${timeoutMs}) by at least ${LEASE_MARGIN_MS} ms`);
  }
  const ownAgent = opts.agent === undefined;
  const agent: HttpDispatcher =
    opts.agent ?? createGuardedAgent({ allowPrivateNetwork: opts.allowPrivateNetwork, connections: concurrency });

  let stopping = false;
  let stopped: Promise<void> | undefined;
  let loop: Promise<void> | undefined;
  let woken = false;
  let interruptSleep: (() => void) | undefined;
  const runs = new Set<Promise<number>>();
  let inFlight = 0;
  const writer = createWriter(db, workerId, logger, () => inFlight > 0);

  async function attempt(d: ClaimedDelivery): Promise<AttemptOutcome> {
    const startedAt = clock.now();
    const t0 = performance.now();
    const headers = deliveryHeaders(d.secret, Math.floor(startedAt / 1000), d.eventId, d.eventName, d.body);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new DeliveryTimeout()), timeoutMs);
    let statusCode: number | null = null;
    let responseBody: string | null = null;
    let error: string | null = null;
    try {
      // undici's request never follows redirects; a 3xx is just a non-2xx status here.
      const res = await request(d.targetUrl, {
        method: 'POST',
        headers,
        body: d.body,
        dispatcher: agent,
        signal: ac.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      statusCode = res.statusCode;
      responseBody = await readCapped(res.body, RESPONSE_BODY_LIMIT);
    } catch (err) {
      const code = (err as { code?: string })?.code;
      error =
        ac.signal.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
          ? `timeout: no complete response within ${timeoutMs} ms`
          : describe(err, d.secret);
    } finally {
      clearTimeout(timer);
    }
    const durationMs = Math.round(performance.now() - t0);
    const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
    if (!ok && error === null) {
      error =
        statusCode! >= 300 && statusCode! < 400
          ? `redirect ${statusCode} not followed`
          : `non-2xx response: ${statusCode}`;
    }
    const recordedAt = clock.now();
    const made = d.attempts + 1;
    const outcome: AttemptOutcome = {
      kind: 'attempt',
      deliveryId: d.id,
      attemptsAtClaim: d.attempts,
      ok,
      startedAt,
      durationMs,
      statusCode,
      responseBody,
      error,
      nextAttemptAt: ok ? null : nextAttemptAt(made, recordedAt),
      recordedAt,
    };
    if (!ok) {
      logger.warn(
        { deliveryId: d.id, hookId: d.hookId, eventId: d.eventId, attempt: made, statusCode, error },
        outcome.nextAttemptAt === null ? 'webhook delivery giving up' : 'webhook delivery failed',
      );
    }
    return outcome;
  }

  async function deliverBatch(batch: ClaimedDelivery[]): Promise<number> {
    let next = 0;
    let sent = 0;
    const lane = async () => {
      while (next < batch.length) {
        const d = batch[next++]!;
        const now = clock.now();
        if (d.hookDeleted) {
          const error = 'hook deleted';
          writer.push({ kind: 'drop', deliveryId: d.id, attemptsAtClaim: d.attempts, recordedAt: now, error });
        } else if (stopping || now + timeoutMs + LEASE_MARGIN_MS > d.claimExpiresAt) {
          // Shutting down, or the claim might lapse mid-request: hand it back for an immediate re-claim.
          writer.push({ kind: 'release', deliveryId: d.id, attemptsAtClaim: d.attempts, recordedAt: now });
        } else {
          inFlight++;
          try {
            writer.push(await attempt(d));
          } finally {
            inFlight--;
          }
          sent++;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batch.length) }, lane));
    return sent;
  }

  async function drainDue(): Promise<number> {
    let total = 0;
    try {
      while (!stopping) {
        const batch = await claimDue(db, { now: clock.now(), workerId, leaseMs, limit: batchSize });
        if (batch.length === 0) break;
        total += await deliverBatch(batch);
      }
    } finally {
      // Results of the last batches are written in the background while the next one is sent; settle them here.
      await writer.idle();
    }
    return total;
  }

  function runOnce(): Promise<number> {
    if (stopping) return Promise.resolve(0);
    const run = drainDue();
    runs.add(run);
    void run.then(
      () => runs.delete(run),
      () => runs.delete(run),
    );
    return run;
  }

  function sleep(): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, pollIntervalMs);
      t.unref();
      function done() {
        clearTimeout(t);
        interruptSleep = undefined;
        resolve();
      }
      interruptSleep = done;
    });
  }

  return {
    runOnce,
    start() {
      if (loop || stopping) return;
      loop = (async () => {
        while (!stopping) {
          woken = false;
          let n = 0;
          try {
            n = await runOnce();
          } catch (err) {
            logger.error({ err: describe(err) }, 'webhook dispatcher pass failed');
          }
          if (!stopping && n === 0 && !woken) await sleep();
        }
      })();
    },
    wake() {
      woken = true;
      interruptSleep?.();
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        interruptSleep?.();
        await loop;
        await Promise.allSettled([...runs]);
        await writer.idle();
        if (ownAgent) await agent.close();
      })();
      return stopped;
    },
  };
}

/**
 * Group commit: outcomes queue up while a write is running and go together in the next transaction, so a busy
 * worker writes big batches and an idle one writes at once.
 */
function createWriter(db: Db, workerId: string, logger: Logger, busy: () => boolean) {
  let queue: Outcome[] = [];
  let running: Promise<void> | undefined;
  const kick = () => {
    if (running) return;
    running = (async () => {
      while (queue.length > 0) {
        // Linger briefly while requests are still on the wire so their outcomes share this transaction.
        const until = performance.now() + LINGER_MS;
        do await new Promise((r) => setImmediate(r));
        while (queue.length < LINGER_MAX && busy() && performance.now() < until);
        const batch = queue;
        queue = [];
        try {
          await recordOutcomes(db, workerId, batch);
        } catch (err) {
          // The rows stay claimed; once the lease lapses they are claimed and sent again (at least once).
          logger.error({ err: describe(err), outcomes: batch.length }, 'recording webhook outcomes failed');
        }
      }
    })().finally(() => {
      running = undefined;
      if (queue.length > 0) kick();
    });
  };
  return {
    push(o: Outcome) {
      queue.push(o);
      kick();
    },
    async idle() {
      while (running) await running;
    },
  };
}

/** Up to `limit` characters of the body; stops reading (and drops the connection) once that much has arrived. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const maxBytes = limit;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) break;
  }
  const bytes = Buffer.concat(chunks).subarray(0, maxBytes);
  // stream: true holds back a multi-byte character cut in half instead of emitting U+FFFD.
  return clean(new TextDecoder().decode(bytes, { stream: true }).slice(0, limit));
}

function describe(err: unknown, secret?: string): string {
  const e = err as { code?: string; message?: string };
  let msg = e?.message ? (e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message) : String(err);
  // Belt and braces: the secret must never reach a log or a stored row.
  if (secret) msg = msg.split(secret).join('[redacted]');
  return clean(msg).slice(0, ERROR_LIMIT);
}

// PostgreSQL text cannot hold NUL characters.
const clean = (s: string): string => s.replace(/\u0000/g, '');
