// The peers of the dispatch-ceiling bench (dispatch-ceiling.ts): the loopback receiver's process, the database of a
// run with its workspace and hook, the events a round emits, the `signet worker` processes, and the wait for a
// round's deliveries to settle. Every process started here is stopped by its own handle.
import { spawn, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openDb, type Db } from '../src/db/db.js';
import { systemClock } from '../src/lib/clock.js';
import { freshPostgres, postgresForTests } from '../src/testing/services.js';
import { EVENT_EXAMPLES } from '../src/webhooks/events.schemas.js';
import { createHook } from '../src/webhooks/hooks.repo.js';
import { createEmitter } from '../src/webhooks/outbox.repo.js';
import { createWorkspace } from '../src/workspaces/workspaces.repo.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUND_DEADLINE_MS = Number(process.env.DISPATCH_DEADLINE_MS ?? 60_000);
const SECRET_KEY = randomBytes(32).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Stats = { count: number; first: number; last: number };
export type Receiver = { url: string; ask(op: 'reset' | 'stats' | 'stop'): Promise<Stats>; child: ChildProcess };

export async function startReceiver(): Promise<Receiver> {
  const child = fork(path.join(here, 'dispatch-receiver.ts'), [], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', () => reject(new Error('receiver exited')));
  });
  let seq = 0;
  const waiting = new Map<number, (s: Stats) => void>();
  child.on('message', (m: Stats & { seq?: number }) => {
    if (m.seq !== undefined) waiting.get(m.seq)?.(m);
    waiting.delete(m.seq!);
  });
  const ask = (op: 'reset' | 'stats' | 'stop') =>
    new Promise<Stats>((resolve) => {
      waiting.set(++seq, resolve);
      child.send({ op, seq });
    });
  return { url: `http://127.0.0.1:${port}/hook`, ask, child };
}

export type Setup = { db: Db; url: string; wsId: string; hookSecret: string; drop(): Promise<void> };

export async function setupDb(kind: string, tmp: string, target: string): Promise<Setup | string> {
  let db: Db;
  let url: string;
  let drop: () => Promise<void>;
  if (kind === 'sqlite') {
    url = `sqlite:${path.join(tmp, 'ceiling.db')}`;
    db = await openDb(url);
    drop = () => db.close();
  } else {
    const check = await postgresForTests();
    if ('skip' in check) return check.skip;
    const pg = await freshPostgres(check.url);
    ({ db, url, drop } = pg);
  }
  const now = systemClock.now();
  const ws = await createWorkspace(db.kysely, { name: 'Bench ceiling', tier: 'business' }, now);
  const hook = await createHook(db.kysely, { workspaceId: ws.id, targetUrl: target, events: [], source: 'api' }, now);
  return { db, url, wsId: ws.id, hookSecret: hook.secret, drop };
}

const emit = createEmitter(systemClock);
let serial = 0;
/**
 * N real events (and their deliveries, one per hook of the workspace) in one transaction; `beforeCommit` runs last
 * inside it, when no worker can see the rows yet.
 */
export async function emitBatch(db: Db, wsId: string, n: number, beforeCommit?: () => Promise<void>): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    for (let i = 0; i < n; i++, serial++) {
      await emit(trx, 'signing_request.signed', wsId, {
        ...EVENT_EXAMPLES['signing_request.signed'],
        document_id: `doc_ceiling_${serial}`,
        signing_request_id: `req_ceiling_${serial}`,
      });
    }
    await beforeCommit?.();
  });
}

export async function succeeded(db: Db): Promise<number> {
  const r = await db.kysely
    .selectFrom('deliveries')
    .select(db.kysely.fn.countAll<number>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Whether a delivery is still open (it has a queue row, migration 028): a read that stops at the first row. */
async function anyOpen(db: Db): Promise<boolean> {
  return (await db.kysely.selectFrom('delivery_queue').select('id').limit(1).execute()).length > 0;
}

/**
 * Resolves once every delivery is settled; the receiver is asked first so the database is polled only at the end. It
 * polls the queue, not a count of the succeeded rows, which read every delivery of every round so far (tens of ms by
 * the third round, inside the timed window); the caller then checks the count, untimed.
 */
export async function waitSettled(s: Setup, rx: Receiver, n: number, t0: number): Promise<void> {
  while ((await rx.ask('stats')).count < n) {
    if (performance.now() - t0 > ROUND_DEADLINE_MS) {
      const st = await s.db.kysely
        .selectFrom('deliveries')
        .select(['status', 'attempts', 'last_error'])
        .distinct()
        .execute();
      throw new Error(
        `dispatch round: deadline, ${(await rx.ask('stats')).count} of ${n} received ${JSON.stringify(st)}`,
      );
    }
    await sleep(5);
  }
  while (await anyOpen(s.db)) {
    if (performance.now() - t0 > ROUND_DEADLINE_MS) throw new Error(`dispatch round: deadline, not all recorded`);
    await sleep(5);
  }
}

const workerCommand = (): [string, string[]] => {
  const extra = process.env.DISPATCH_WORKER_NODE_ARGS;
  if (!extra) return [path.join(here, '..', 'bin', 'signet'), ['worker']];
  return [process.execPath, [...extra.split(' '), path.join(here, '..', 'bin', 'signet.js'), 'worker']];
};

export function startWorkers(n: number, url: string, tmp: string): ChildProcess[] {
  return Array.from({ length: n }, (_, i) =>
    // DISPATCH_WORKER_NODE_ARGS (e.g. --cpu-prof) runs bin/signet.js under node with them; the shell wrapper's
    // allocator settings do not matter for a profile.
    spawn(...workerCommand(), {
      env: {
        ...process.env,
        DATABASE_URL: url,
        DATA_DIR: path.join(tmp, `worker-${i}`),
        SIGNET_ALLOW_PRIVATE_NETWORK: '1',
        // One key for every worker, as processes sharing one database must have (each has its own DATA_DIR here).
        SIGNET_SECRET_KEY: SECRET_KEY,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    }).on('exit', (code, sig) => {
      if (code !== 0 && sig !== 'SIGTERM') console.error(`bench: worker ${i} exited unexpectedly (${code ?? sig})`);
    }),
  );
}

export async function stopWorkers(ws: ChildProcess[]): Promise<void> {
  await Promise.all(
    ws.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.exitCode !== null || w.signalCode !== null) return resolve();
          w.once('exit', () => resolve());
          w.kill('SIGTERM');
        }),
    ),
  );
}
