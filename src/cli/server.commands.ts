// `signet serve`, `worker`, `migrate`, `pki export-ca` and `jobs run`: the service or its parts in this process.
import type { Command } from 'commander';
import { systemClock } from '../lib/clock.js';
import { JOB_NAMES } from '../jobs/names.js';
import { config, print, withDb } from './context.js';

// The server, the PKI and the job catalogue are imported by the commands that use them, so that the other commands
// (and their callers: scripts, tests) do not pay for loading the whole application.
const runServer: typeof import('../main.js').runServer = async (...args) =>
  (await import('../main.js')).runServer(...args);

export function addServerCommands(program: Command): void {
  program
    .command('serve')
    .description('serve the API and run the background worker')
    .option('--no-worker', 'serve only; run `signet worker` elsewhere')
    .action(async (o: { worker: boolean }) => runServer(config, { api: true, worker: o.worker }));

  program
    .command('worker')
    .description('run the background worker only (webhook deliveries, scheduled jobs)')
    .action(async () => runServer(config, { api: false, worker: true }));

  program
    .command('migrate')
    .description('apply database migrations')
    .action(async () => withDb(async () => console.log('migrated'), { migrate: true }));
}

export function addPkiCommands(program: Command): void {
  program
    .command('pki')
    .description('seal certificate authority')
    .command('export-ca')
    .description(
      'print the CA certificate (PEM) that issues the seal and timestamp certificates; add it to your trust store',
    )
    .action(async () => {
      const [{ loadOrCreatePki }, { configuredKeyring }] = await Promise.all([
        import('../pki/pki.js'),
        import('../secrets/keyring.js'),
      ]);
      const pki = await loadOrCreatePki({
        dataDir: config.dataDir,
        clock: systemClock,
        sealP12: config.sealP12 ?? undefined,
        sealP12Password: config.sealP12Password,
        publicBaseUrl: config.baseUrl,
        keyring: await configuredKeyring(config),
      });
      process.stdout.write(pki.caCertPem.endsWith('\n') ? pki.caCertPem : `${pki.caCertPem}\n`);
    });
}

export function addJobCommands(program: Command): void {
  program
    .command('jobs')
    .description('scheduled jobs')
    .command('run <name>')
    .description(`run one job once now: ${JOB_NAMES.join(', ')}`)
    .option('--json', 'print JSON')
    .action(async (name: string, o: { json?: boolean }) => {
      const [{ scheduledJobs, createPkiServices }, { runJob }, { prepareSecrets }] = await Promise.all([
        import('../runtime.js'),
        import('../jobs/scheduler.js'),
        import('../secrets/keyring.js'),
      ]);
      const r = await withDb(async (db) => {
        const keyring = await prepareSecrets(config, db);
        let pki = null as ReturnType<typeof createPkiServices> | null;
        const jobs = scheduledJobs({
          db,
          clock: systemClock,
          config,
          pki: () => (pki ??= createPkiServices(config, systemClock, keyring)),
        });
        try {
          return await runJob(jobs, name);
        } finally {
          if (pki) await (await pki).sealer.close();
        }
      });
      print(!!o.json, { job: name, result: r }, `${name}: ${JSON.stringify(r)}`);
    });
}
