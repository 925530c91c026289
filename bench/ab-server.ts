// One API server of the checkout named by argv[2], started as bench/run.ts starts its scenarios (memory limiter, a
// business key with its limit raised, three hooks), for bench/ab.ts and bench/ab-create.ts; argv[3] is the database:
// `sqlite` (a temp file, the default) or `pg` (a fresh database on the test server, dropped at exit). It imports
// that checkout's own src/, so two checkouts of different code run side by side. API only (`worker: false`): no
// seal, mail, delivery or scheduled job runs, on either side. Reports {port, token} over IPC and answers 'cpu' with
// process.cpuUsage().
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

const root = path.resolve(process.argv[2] ?? '.');
// Typed by this checkout's modules; the other checkout's have the same names (they are what the bench compares).
const from = <T>(rel: string): Promise<T> => import(path.join(root, 'src', rel)) as Promise<T>;
const { createRuntime } = await from<typeof import('../src/runtime.js')>('runtime.ts');
const { loadConfig } = await from<typeof import('../src/config.js')>('config.ts');
const { openDb } = await from<typeof import('../src/db/db.js')>('db/db.ts');
const { systemClock } = await from<typeof import('../src/lib/clock.js')>('lib/clock.ts');
const { createKey, setRateLimit } = await from<typeof import('../src/keys/keys.repo.js')>('keys/keys.repo.ts');
const { createMemoryLimiter } = await from<typeof import('../src/ratelimit/ratelimit.js')>('ratelimit/ratelimit.ts');
const { createHook } = await from<typeof import('../src/webhooks/hooks.repo.js')>('webhooks/hooks.repo.ts');
const { createWorkspace } = await from<typeof import('../src/workspaces/workspaces.repo.js')>(
  'workspaces/workspaces.repo.ts',
);

const { freshPostgres, postgresForTests } =
  await from<typeof import('../src/testing/services.js')>('testing/services.ts');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-ab-'));
const pg = process.argv[3] === 'pg' ? await postgresForTests() : undefined;
if (pg && 'skip' in pg) throw new Error(`PostgreSQL: ${pg.skip}`);
const fresh = pg ? await freshPostgres(pg.url) : undefined;
const db = fresh?.db ?? (await openDb(`sqlite:${path.join(tmp, 'signet.db')}`));
const now = systemClock.now();
const ws = await createWorkspace(db.kysely, { name: 'Bench AB', tier: 'business' }, now);
const { key, plaintext } = await createKey(db.kysely, { workspaceId: ws.id, legacy: false }, now);
await setRateLimit(db.kysely, key.id, 1_000_000_000);
for (let i = 0; i < 3; i++) {
  const events = i === 0 ? [] : ['document.completed', 'signing_request.signed'];
  await createHook(
    db.kysely,
    { workspaceId: ws.id, targetUrl: `https://hooks.example.com/signet/${i}`, events, source: 'api' },
    now + i,
  );
}
// The monthly cap raised like the rate limit: a create round makes thousands of documents.
const config = loadConfig({
  DATA_DIR: tmp,
  SIGNET_ALLOW_PRIVATE_NETWORK: '1',
  LOG_LEVEL: 'silent',
  SIGNET_TIER_CAPS: 'business=1000000000',
});
const limiter = createMemoryLimiter({ clock: systemClock });
const rt = await createRuntime(config, { api: true, worker: false, db, limiter, clock: systemClock, logger: false });
await rt.app!.listen({ port: 0, host: '127.0.0.1' });

process.on('message', (m) => {
  if (m === 'cpu') process.send!({ cpu: process.cpuUsage() });
});
process.on('disconnect', () => {
  void rt
    .close()
    .then(() => fresh?.drop())
    .finally(() => {
      fs.rmSync(tmp, { recursive: true, force: true });
      process.exit(0);
    });
});
process.send!({ port: (rt.app!.server.address() as AddressInfo).port, token: plaintext });
