// What the dispatcher tests share: a recording receiver, a seeded hook and its events, row reads, a fresh database.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, beforeEach } from 'node:test';
import Stripe from 'stripe';
import { Agent } from 'undici';
import { openDb, type Db } from '../../db/db.js';
import type { ManualClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { WEBHOOK_TIMEOUT_MS } from '../../limits.js';
import type { AttemptOutcome } from '../deliveries.repo.js';
import { createDispatcher, type DispatcherOptions } from '../dispatcher.js';
import { createEmitter } from '../outbox.repo.js';
import { newWebhookSecret } from '../signature.js';
import { DUE_STATUSES, type DeliveryStatus } from '../states.js';

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const stripe = new Stripe('sk_test_x');
/**
 * For tests that count every delivery attempted: a request held past slowMs by a saturated machine (CI runs suites
 * side by side) would mark the receiver slow and defer the rest, as dispatcher-targets.test.ts checks on purpose.
 */
export const neverSlow = { slowMs: WEBHOOK_TIMEOUT_MS } as const;

export type Hit = { headers: http.IncomingHttpHeaders; raw: Buffer; at: number };
export type Reply = (req: http.IncomingMessage, res: http.ServerResponse, hit: Hit) => void;

/** A real HTTP receiver on 127.0.0.1 recording every request; `reply` decides the answer (200 "ok" by default). */
export async function receiver(reply: Reply = (_q, res) => res.end('ok')) {
  const hits: Hit[] = [];
  let onHit: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { headers: req.headers, raw: Buffer.concat(chunks), at: Date.now() };
      hits.push(hit);
      onHit?.();
      reply(req, res, hit);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits,
    /** Resolves once `n` requests have arrived. */
    waitFor(n: number): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (hits.length >= n) {
            onHit = undefined;
            resolve();
          }
        };
        onHit = check;
        check();
      });
    },
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

export type Seeded = { workspaceId: string; hookId: string; secret: string; eventIds: string[] };

/** A workspace, one hook (all events) and `n` events emitted through the real outbox in one transaction. */
export async function seed(db: Db, clock: ManualClock, targetUrl: string, n = 1): Promise<Seeded> {
  const now = clock.now();
  const workspaceId = newId('ws');
  await db.kysely
    .insertInto('workspaces')
    .values({ id: workspaceId, name: 'Acme', slug: workspaceId, tier: 'business', reply_to: null, created_at: now })
    .execute();
  const secret = newWebhookSecret();
  const hookId = newId('hook');
  await db.kysely
    .insertInto('hooks')
    .values({
      id: hookId,
      workspace_id: workspaceId,
      target_url: targetUrl,
      events: '[]',
      secret,
      document_id: null,
      source: 'dashboard',
      created_at: now,
      deleted_at: null,
    })
    .execute();
  const emit = createEmitter(clock);
  const eventIds = await db.kysely.transaction().execute(async (trx) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await emit(trx, 'signing_request.signed', workspaceId, {
        signing_request_id: `sr_${i}`,
        document_id: `doc_${i}`,
        // Non-ASCII on purpose: the body must arrive byte for byte.
        signer: { email: 'zoe@example.com', name: 'Zoë Ångström — 署名 ✍️' },
        sha256: 'a'.repeat(64),
      });
      ids.push(r.eventId);
    }
    return ids;
  });
  return { workspaceId, hookId, secret, eventIds };
}

/**
 * Deliveries with their queue row's lease (null when not queued), checking on each read that the row is queued
 * exactly while it is open, with the delivery's own attempts and due time.
 */
export async function deliveriesWhere(db: Db, column: 'event_id' | 'hook_id' | 'd.id', value: string) {
  const rows = await db.kysely
    .selectFrom('deliveries as d')
    .leftJoin('delivery_queue as q', 'q.id', 'd.id')
    .selectAll('d')
    .select(['q.claimed_by', 'q.claim_expires_at', 'q.attempts as queued_attempts', 'q.next_attempt_at as queued_at'])
    .where(column === 'd.id' ? 'd.id' : `d.${column}`, '=', value)
    .execute();
  for (const r of rows) {
    const open = DUE_STATUSES.includes(r.status as DeliveryStatus);
    const queued = r.queued_attempts === null ? null : [r.queued_attempts, r.queued_at];
    assert.deepEqual(queued, open ? [r.attempts, r.next_attempt_at] : null, `delivery ${r.id} (${r.status}) queued`);
  }
  return rows;
}

export const deliveryOf = async (db: Db, eventId: string) => {
  const [row] = await deliveriesWhere(db, 'event_id', eventId);
  assert.ok(row, `a delivery of ${eventId}`);
  return row;
};

export const attemptsOf = (db: Db, deliveryId: string) =>
  db.kysely
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();

/** The outcome of a claimed delivery's attempt as the dispatcher records a 200 at `at`, with `changes`. */
export const attemptOutcome = (
  deliveryId: string,
  at: number,
  changes: Partial<AttemptOutcome> = {},
): AttemptOutcome => ({
  kind: 'attempt',
  deliveryId,
  attemptsAtClaim: 0,
  ok: true,
  startedAt: at,
  durationMs: 1,
  statusCode: 200,
  responseBody: 'ok',
  error: null,
  nextAttemptAt: null,
  recordedAt: at,
  ...changes,
});

export const tOf = (h: Hit): number => Number(/^t=(\d+),/.exec(String(h.headers['x-service-signature']))![1]);

// Live bindings: the calling suite's tests read them once useDispatcherDb's hooks have run.
export let db: Db;
export let agent: Agent;
const made: Array<{ stop(): Promise<void> }> = [];

/** Registers the suite's hooks. A fresh database per test: a moved clock must not make another test's leftovers due. */
export function useDispatcherDb(): void {
  before(() => {
    agent = new Agent();
  });
  beforeEach(async () => {
    db = await openDb('sqlite::memory:');
  });
  afterEach(async () => {
    for (const d of made.splice(0)) await d.stop();
    await db.close();
  });
  after(async () => {
    await agent.close();
  });
}

/** A dispatcher on the test's database, stopped after the test. */
export const dispatcher = (clock: ManualClock, extra: Partial<DispatcherOptions> = {}) => {
  const d = createDispatcher({
    db,
    clock,
    workerId: `test:${process.pid}:${newId('att')}`,
    agent,
    allowPrivateNetwork: true,
    ...extra,
  });
  made.push(d);
  return d;
};
