// Webhook delivery, as a lease-claim job (jobs/runner.ts). Guarantees:
// - At least once: a delivery stays due (`pending` before its first attempt, `retrying` after a failed one, each
//   from next_attempt_at) and ends only through a recorded 2xx (`succeeded`), its 7th recorded failure
//   (`giving_up`) or its hook's deletion (below). A worker that dies mid-delivery leaves a claim that expires;
//   another worker then claims and sends it again.
// - A deleted hook's deliveries stop: the hook is checked again just before each send (through an exact cache on the
//   change probe, so it costs a query only after the hooks may have changed; the probe is read once per turn of the
//   event loop), and a row whose hook is gone is not sent but ends `giving_up` with last_error "hook deleted". Only
//   an attempt already on its way when the deletion became visible still completes (visible here from the next turn
//   of the event loop, and on PostgreSQL within the probe's notice latency).
// - No double record: an outcome is written only while this worker still holds the claim it sent under.
// - A live worker never sends on a claim that could expire before the request's timeout (the runner's lease rule).
// - No transaction is open across an HTTP call. Redirects are never followed. A response counts only when it is
//   complete within timeoutMs; each attempt is signed afresh with `t` taken at send time.
// - One slow receiver cannot hold every lane (targets.ts): a request slower than slowMs lets go of its lane, and a
//   slow receiver's deliveries beyond its share are deferred (handed back due later, no attempt counted). runOnce()
//   and stop() still resolve only once every request made has ended and its outcome is written.
import { performance } from 'node:perf_hooks';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Db } from '../db/db.js';
import { createExactCache } from '../db/exact-cache.js';
import { migrationGate } from '../http/feature-gate.js';
import { createRunner, type LeaseJob, type Runner } from '../jobs/runner.js';
import { fixedDelays, nextAttemptAt } from '../jobs/retry.js';
import type { Clock } from '../lib/clock.js';
import { describeError, silentLogger, type Logger } from '../lib/logger.js';
import { createGuardedAgent } from '../lib/outbound.js';
import {
  DELIVERY_LEASE_MS,
  WEBHOOK_DEFER_MAX_MS,
  WEBHOOK_RETRY_DELAYS_MS,
  WEBHOOK_SLOW_MS,
  WEBHOOK_SLOW_TARGET_IN_FLIGHT,
  WEBHOOK_TIMEOUT_MS,
} from '../limits.js';
import {
  claimDue,
  recordOutcomes,
  type AttemptOutcome,
  type ClaimedDelivery,
  type Outcome,
} from './deliveries.repo.js';
import { isHookGone } from './hooks.repo.js';
import { createPoster } from './post.js';
import { deliveryHeaders } from './signature.js';
import { createHookSecretOpener } from './hook-secrets.js';
import { createTargetLanes } from './targets.js';
import { SecretKeyError, type Keyring } from '../lib/secret-box.js';

/** Characters of a response body kept for the record; the rest is never buffered. */
export const RESPONSE_BODY_LIMIT = 2048;
/** The spec's schedule: attempt 1 at once, then +1m, +5m, +30m, +2h, +6h, +24h; giving_up after the 7th failure. */
export const DELIVERY_SCHEDULE = fixedDelays(WEBHOOK_RETRY_DELAYS_MS);
// Group commit: wait at most this long, or for this many outcomes, before writing a transaction. Every write
// transaction is a lock two SQLite workers fight over (and a few round trips on PostgreSQL), so fewer, larger ones.
const LINGER_MS = 40;
const LINGER_MAX = 400;
const HOOK_STATE_CACHE_SIZE = 1000;

export type DispatcherOptions = {
  db: Db;
  clock: Clock;
  /** Unique per process, e.g. `${hostname}:${pid}:${random}`; claims are owned by it. */
  workerId: string;
  /** undici dispatcher; defaults to a guarded agent that refuses non-public addresses unless allowed. */
  agent?: HttpDispatcher;
  allowPrivateNetwork: boolean;
  timeoutMs?: number;
  /** A request in flight this long lets go of its lane (WEBHOOK_SLOW_MS); tests shorten it. */
  slowMs?: number;
  leaseMs?: number;
  batchSize?: number;
  concurrency?: number;
  /** Real-time sleep of the background loop when nothing was due. */
  pollIntervalMs?: number;
  logger?: Logger;
  /** Opens the hooks' stored secrets; without it they must be plain. */
  keyring?: Keyring | null;
};

/** runOnce resolves with the number of HTTP attempts made. */
export type Dispatcher = Runner;

export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const { db, clock, workerId } = opts;
  const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const concurrency = opts.concurrency ?? 64;
  const logger = opts.logger ?? silentLogger;
  const ownAgent = opts.agent === undefined;
  const agent: HttpDispatcher =
    opts.agent ?? createGuardedAgent({ allowPrivateNetwork: opts.allowPrivateNetwork, connections: concurrency });
  const poster = createPoster(agent, timeoutMs, RESPONSE_BODY_LIMIT);
  const writer = createWriter(db, workerId, logger, () => poster.inFlight > 0);
  const openSecret = createHookSecretOpener(opts.keyring ?? null);
  const lanes = createTargetLanes({
    slowMs: opts.slowMs ?? WEBHOOK_SLOW_MS,
    slowInFlight: WEBHOOK_SLOW_TARGET_IN_FLIGHT,
    // Requests let go of their lanes stay bounded: sockets and the bodies they carry.
    maxLetGo: concurrency * 4,
    timeoutMs,
    deferMaxMs: WEBHOOK_DEFER_MAX_MS,
    onLateError: (err) => logger.error({ err: describeError(err) }, 'webhook delivery failed after its lane moved on'),
  });

  async function attempt(d: ClaimedDelivery): Promise<AttemptOutcome> {
    const startedAt = clock.now();
    const t0 = performance.now();
    let secret: string;
    let r: Awaited<ReturnType<typeof poster.post>>;
    try {
      secret = openSecret(d.hookId, d.secret);
    } catch (err) {
      // Only after a key change under a running process (start refuses a key that cannot open the stored secrets).
      if (!(err instanceof SecretKeyError)) throw err;
      secret = '';
      r = { statusCode: null, body: null, timedOut: false, error: new Error(`hook secret: ${err.message}`) };
    }
    r ??= await poster.post(
      d.targetUrl,
      deliveryHeaders(secret, Math.floor(startedAt / 1000), d.eventId, d.eventName, d.body),
      d.body,
    );
    const statusCode = r.statusCode;
    const responseBody = r.body;
    let error: string | null =
      r.statusCode !== null
        ? null
        : r.timedOut
          ? `timeout: no complete response within ${timeoutMs} ms`
          : describeError(r.error, secret ? [secret] : []);
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
      nextAttemptAt: ok ? null : nextAttemptAt(DELIVERY_SCHEDULE, made, recordedAt),
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

  // A batch is sent over a while: a hook deleted after the claim must stop the rest of it.
  const gone = createExactCache<string, boolean>({
    probe: db.probe,
    max: HOOK_STATE_CACHE_SIZE,
    load: (hookId) => isHookGone(db.kysely, hookId),
  });
  // One probe reading serves every send that starts in the same turn of the event loop: on SQLite a reading is a
  // database read, and many lanes start their next send in the turn their responses arrived.
  let reading: number | null | undefined;
  const readingThisTurn = () => {
    if (reading === undefined) {
      reading = gone.version();
      setImmediate(() => (reading = undefined));
    }
    return reading;
  };
  const hookGone = (hookId: string): boolean | Promise<boolean> => {
    const v = readingThisTurn();
    return gone.get(hookId, v) ?? gone.load(hookId, v);
  };

  // A database before the due queue (a rolling upgrade, SIGNET_AUTO_MIGRATE=0) has nothing to claim from: nothing is
  // sent until `signet migrate` has run, which queues every open delivery.
  const queue = migrationGate(db, '028-delivery-queue');
  // After a full claim more is likely due: the next claim skips its look for a free row (lease.repo.ts).
  let lastFull = false;
  const job: LeaseJob<ClaimedDelivery> = {
    async claim(o) {
      if (!(await queue.available())) return [];
      const claimed = await claimDue(db, { ...o, look: !lastFull });
      lastFull = claimed.length === o.limit;
      return claimed;
    },
    async work(d) {
      if (d.hookDeleted || (await hookGone(d.hookId))) {
        writer.push({
          kind: 'drop',
          deliveryId: d.id,
          attemptsAtClaim: d.attempts,
          recordedAt: clock.now(),
          error: 'hook deleted',
        });
        return false;
      }
      const target = poster.origin(d.targetUrl);
      const wait = lanes.deferral(target);
      if (wait !== null) {
        const recordedAt = clock.now();
        writer.push({
          kind: 'defer',
          deliveryId: d.id,
          attemptsAtClaim: d.attempts,
          recordedAt,
          nextAttemptAt: recordedAt + wait,
        });
        return false;
      }
      await lanes.hold(target, async () => writer.push(await attempt(d)));
      return true;
    },
    async release(d) {
      writer.push({
        kind: 'release',
        deliveryId: d.id,
        attemptsAtClaim: d.attempts,
        recordedAt: clock.now(),
        nextAttemptAt: d.dueAt,
      });
    },
    // Outcomes are written in the background while the next batch is sent; each pass settles them at its end.
    settle: () => writer.idle(),
  };

  const runner = createRunner(job, {
    name: 'webhook dispatcher',
    clock,
    workerId,
    logger,
    leaseMs: opts.leaseMs ?? DELIVERY_LEASE_MS,
    timeoutMs,
    batchSize: opts.batchSize ?? 400,
    concurrency,
    pollIntervalMs: opts.pollIntervalMs ?? 250,
    prefetch: true,
  });
  // The background loop's passes do not wait for requests that let go of their lanes; these two do.
  return {
    ...runner,
    async runOnce() {
      const n = await runner.runOnce();
      await lanes.idle();
      await writer.idle();
      return n;
    },
    async stop() {
      await runner.stop();
      await lanes.idle();
      await writer.idle();
      if (ownAgent) await agent.close();
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
  let endLinger: (() => void) | undefined;
  // A timer, not a setImmediate spin: the process sleeps while it lingers, leaving the CPU to the requests' peers.
  const linger = () =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, LINGER_MS);
      function done() {
        clearTimeout(t);
        endLinger = undefined;
        resolve();
      }
      endLinger = done;
    });
  const kick = () => {
    if (running) return;
    running = (async () => {
      while (queue.length > 0) {
        // Linger briefly while requests are still on the wire so their outcomes share this transaction.
        if (queue.length < LINGER_MAX && busy()) await linger();
        const batch = queue;
        queue = [];
        try {
          await recordOutcomes(db, workerId, batch);
        } catch (err) {
          // The rows stay claimed; once the lease lapses they are claimed and sent again (at least once).
          logger.error({ err: describeError(err), outcomes: batch.length }, 'recording webhook outcomes failed');
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
      if (queue.length >= LINGER_MAX || !busy()) endLinger?.();
      kick();
    },
    async idle() {
      endLinger?.();
      while (running) await running;
    },
  };
}
