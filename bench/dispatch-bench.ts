// The webhook dispatch bench: events emitted in batches, then delivered by the real dispatcher to a loopback receiver.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDb } from '../src/db/db.js';
import { systemClock } from '../src/lib/clock.js';
import { createDispatcher } from '../src/webhooks/dispatcher.js';
import { createHook } from '../src/webhooks/hooks.repo.js';
import { EVENT_EXAMPLES } from '../src/webhooks/events.schemas.js';
import { createEmitter } from '../src/webhooks/outbox.repo.js';
import { createWorkspace } from '../src/workspaces/workspaces.repo.js';
import { results } from './http-rounds.js';
import { DISPATCH_DEADLINE_MS, DISPATCH_EVENTS, EMIT_BATCH, HOST } from './settings.js';

export type DispatchResult = {
  emitMs: number;
  ms: number;
  delivered: number;
  received: number;
  passes: number;
  attempts: number;
  statuses: Record<string, number>;
};

export async function dispatch(tmp: string): Promise<DispatchResult> {
  let received = 0;
  const receiver = http.createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, HOST, r));
  const target = `http://${HOST}:${(receiver.address() as AddressInfo).port}/hook`;

  const db = await openDb(`sqlite:${path.join(tmp, 'dispatch.db')}`);
  const now = systemClock.now();
  const ws = await createWorkspace(db.kysely, { name: 'Bench dispatch', tier: 'business' }, now);
  await createHook(db.kysely, { workspaceId: ws.id, targetUrl: target, events: [], source: 'api' }, now);

  const emit = createEmitter(systemClock);
  const e0 = performance.now();
  for (let from = 0; from < DISPATCH_EVENTS; from += EMIT_BATCH) {
    await db.kysely.transaction().execute(async (trx) => {
      for (let i = from; i < Math.min(from + EMIT_BATCH, DISPATCH_EVENTS); i++) {
        await emit(trx, 'signing_request.signed', ws.id, {
          ...EVENT_EXAMPLES['signing_request.signed'],
          document_id: `doc_bench_${i}`,
          signing_request_id: `req_bench_${i}`,
        });
      }
    });
  }
  const emitMs = performance.now() - e0;

  const countStatuses = async () => {
    const rs = await db.kysely
      .selectFrom('deliveries')
      .select(['status', db.kysely.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rs.map((r) => [r.status, Number(r.n)]));
  };

  // The guarded agent the service uses in production, with private addresses allowed for the loopback receiver.
  const dispatcher = createDispatcher({
    db,
    clock: systemClock,
    workerId: `bench:${process.pid}`,
    allowPrivateNetwork: true,
  });
  let passes = 0;
  let attempts = 0;
  let statuses: Record<string, number>;
  const t0 = performance.now();
  try {
    for (;;) {
      attempts += await dispatcher.runOnce();
      passes++;
      statuses = await countStatuses();
      if ((statuses.succeeded ?? 0) >= DISPATCH_EVENTS) break;
      if (performance.now() - t0 > DISPATCH_DEADLINE_MS) {
        results.notes.push(
          `dispatch: deadline of ${DISPATCH_DEADLINE_MS / 1000} s reached before all deliveries succeeded`,
        );
        results.failures++;
        break;
      }
    }
  } finally {
    await dispatcher.stop();
  }
  const ms = performance.now() - t0;
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
  await db.close();
  return { emitMs, ms, delivered: statuses.succeeded ?? 0, received, passes, attempts, statuses };
}
