// `npm run bench:slow-receiver`: how long a healthy receiver's deliveries take while another receiver never answers
// (webhooks/targets.ts). One in-process dispatcher with the shipped settings (64 lanes, the 15 s timeout) on a SQLite
// file; two loopback receivers, one answering "ok" at once, one never answering. The hanging receiver's deliveries are
// emitted first, so they are the oldest due. Prints the healthy deliveries' time with and without the hanging ones,
// and what the hanging receiver got. Bounded: N deliveries per receiver; the hanging requests end by their timeout.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDb } from '../src/db/db.js';
import { systemClock } from '../src/lib/clock.js';
import { WEBHOOK_TIMEOUT_MS } from '../src/limits.js';
import { createDispatcher } from '../src/webhooks/dispatcher.js';
import { EVENT_EXAMPLES } from '../src/webhooks/events.schemas.js';
import { createHook } from '../src/webhooks/hooks.repo.js';
import { createEmitter } from '../src/webhooks/outbox.repo.js';
import { createWorkspace } from '../src/workspaces/workspaces.repo.js';

const N = Number(process.env.SLOW_RECEIVER_N ?? 400);

async function listen(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

async function scenario(withHanging: boolean) {
  let healthyHits = 0;
  let hangingHits = 0;
  let lastHealthy = 0;
  let allHealthy: () => void = () => undefined;
  const healthyDone = new Promise<void>((r) => (allHealthy = r));
  const healthy = await listen((req, res) => {
    req.resume();
    req.on('end', () => {
      lastHealthy = performance.now();
      if (++healthyHits === N) allHealthy();
      res.end('ok');
    });
  });
  const hanging = await listen((req) => {
    req.resume();
    hangingHits++;
  });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-slow-receiver-'));
  const db = await openDb(`sqlite:${path.join(tmp, 'db.sqlite')}`);
  try {
    const now = systemClock.now();
    const wsHealthy = await createWorkspace(db.kysely, { name: 'Healthy', tier: 'business' }, now);
    const wsHanging = await createWorkspace(db.kysely, { name: 'Hanging', tier: 'business' }, now);
    await createHook(db.kysely, { workspaceId: wsHealthy.id, targetUrl: healthy.url, events: [], source: 'api' }, now);
    await createHook(db.kysely, { workspaceId: wsHanging.id, targetUrl: hanging.url, events: [], source: 'api' }, now);
    const emit = createEmitter(systemClock);
    const body = EVENT_EXAMPLES['signing_request.signed'];
    await db.kysely.transaction().execute(async (trx) => {
      if (withHanging) for (let i = 0; i < N; i++) await emit(trx, 'signing_request.signed', wsHanging.id, body);
      for (let i = 0; i < N; i++) await emit(trx, 'signing_request.signed', wsHealthy.id, body);
    });
    const d = createDispatcher({ db, clock: systemClock, workerId: 'bench', allowPrivateNetwork: true });
    const t0 = performance.now();
    d.start();
    // Long enough for code without the guard: the hanging deliveries first, 64 at a time, each waiting the timeout.
    const deadline = setTimeout(allHealthy, (Math.ceil(N / 64) + 2) * WEBHOOK_TIMEOUT_MS);
    await healthyDone;
    clearTimeout(deadline);
    const healthyS = (lastHealthy - t0) / 1000;
    const hangingAtHealthyEnd = hangingHits;
    await d.stop();
    const statuses = await db.kysely
      .selectFrom('deliveries')
      .select(['status', 'attempts', db.kysely.fn.countAll<number>().as('n')])
      .where('workspace_id', '=', wsHanging.id)
      .groupBy(['status', 'attempts'])
      .execute();
    return { healthyS, healthyHits, hangingAtHealthyEnd, statuses };
  } finally {
    for (const s of [healthy.server, hanging.server]) {
      s.closeAllConnections();
      s.close();
    }
    await db.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

console.log(
  `bench:slow-receiver ${new Date().toISOString()}, ${N} deliveries per receiver, load ${os.loadavg()[0]!.toFixed(1)}`,
);
for (const withHanging of [false, true]) {
  const r = await scenario(withHanging);
  console.log(
    `${withHanging ? 'with' : 'without'} a hanging receiver: ` +
      (r.healthyHits === N
        ? `${N} healthy deliveries in ${r.healthyS.toFixed(2)} s`
        : `only ${r.healthyHits} of ${N} healthy deliveries before the deadline`) +
      (withHanging
        ? `; the hanging receiver had got ${r.hangingAtHealthyEnd} requests by then; its deliveries after the ` +
          `worker stopped: ${r.statuses.map((s) => `${Number(s.n)} ${s.status} (attempts ${s.attempts})`).join(', ')}`
        : ''),
  );
}
