// The composition root: every long-lived collaborator (database, limiter, mail, blobs, PDF engine, sealer, the
// lease-claim workers, the scheduler) is built here once, for `signet serve`, `signet worker` and the test harness
// alike. Tests get the same graph and drive the background work with `work()` under an injected clock.
import fs from 'node:fs/promises';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { dbOptions, openDb, type Db } from './db/db.js';
import { systemClock, type Clock } from './lib/clock.js';
import { buildApp, type App } from './app.js';
import { createRateLimiter, type RateLimiter } from './ratelimit/ratelimit.js';
import { createDispatcher, type Dispatcher } from './webhooks/dispatcher.js';
import { createEmitter } from './webhooks/outbox.repo.js';
import {
  createScheduler,
  pruneJobRunsJob,
  runJob,
  type JobCatalogue,
  type ScheduledJob,
  type Scheduler,
} from './jobs/scheduler.js';
import { pruneJob } from './jobs/prune.js';
import { MAIL_OUTBOX_PRUNE } from './mail/outbox.repo.js';
import { SMS_OUTBOX_PRUNE } from './sms/outbox.repo.js';
import { pruneEventsJob } from './webhooks/retention.js';
import { pruneSessionsJob } from './dashboard/people.service.js';
import { wakeOnWork, type Runner } from './jobs/runner.js';
import type { JobName } from './jobs/names.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import { createMailQueue } from './mail/outbox.js';
import { createSmsQueue } from './sms/outbox.js';
import { createSmsSender, type SmsSender } from './sms/sender.js';
import { createTwilioTransport } from './sms/transport.js';
import { expireReviewsJob } from './templates/staging.js';
import { pruneEmbedSessionsJob } from './embedded/sessions.service.js';
import { createBlobStore, type BlobStore } from './documents/blob-store.js';
import { sweepOrphanBlobsJob } from './documents/blob-orphans.js';
import { createFileFetcher, type FileFetcher } from './documents/fetch-file.js';
import { pdfEngine } from './documents/pdf/engine.js';
import { closePdfWorkers } from './documents/pdf/pool.js';
import type { Sealer } from './documents/pdf/seal.js';
import { pruneIdempotencyJob } from './idempotency/idempotency.js';
import { pruneKeyUsesJob } from './keys/key-use.js';
import { expireRequestsJob } from './signing/expiry.js';
import { createSealingRunner } from './signing/sealing.js';
import { createBulkSendRunner } from './templates/bulk-sends.job.js';
import { renewTimestampsJob } from './signing/renewal.js';
import { sendRemindersJob, warnExpiringJob } from './signing/reminders.js';
import { purgeDocumentsJob } from './signing/purge.js';
import { noWake, type Wakers } from './signing/transition.js';
import { createTrustStore, type TrustStore } from './pki/trust.js';
import { createQesService } from './qes/service.js';
import type { Pki, PkiOptions } from './pki/pki.js';
import { pemCertsToDer } from './pki/pem.js';
import { prepareSecretsOrClose } from './secrets/keyring.js';

export const newWorkerId = (): string => `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

type JobDeps = {
  db: Db;
  clock: Clock;
  wake: Wakers;
  config: Config;
  blobs: BlobStore;
  workerId: string;
  /** The PKI side, built on first use (a job that needs no PKI never loads it). */
  pki: () => Promise<PkiServices>;
  logger?: Logger;
};

/** Every clock-driven job, by the name `signet jobs run` takes; each feature defines its own. */
const JOBS: Record<JobName, (deps: JobDeps) => ScheduledJob> = {
  'prune-idempotency': pruneIdempotencyJob,
  'expire-requests': (deps) => expireRequestsJob(transitionDeps(deps)),
  'expire-reviews': (deps) => expireReviewsJob(transitionDeps(deps)),
  'prune-embed-sessions': pruneEmbedSessionsJob,
  'prune-key-uses': (deps) => pruneKeyUsesJob(deps),
  'prune-events': (deps) => pruneEventsJob(deps),
  // Mail and SMS are two modules with one retention: the job that spans them is composed here.
  'prune-outboxes': (deps) =>
    pruneJob(deps, { targets: [MAIL_OUTBOX_PRUNE, SMS_OUTBOX_PRUNE], retention: 'outboxMs', needs: '005-templates' }),
  'prune-sessions': pruneSessionsJob,
  'prune-job-runs': pruneJobRunsJob,
  'renew-timestamps': (deps) =>
    renewTimestampsJob({
      db: deps.db,
      clock: deps.clock,
      blobs: deps.blobs,
      workerId: deps.workerId,
      weakAlgorithms: deps.config.ltvWeakAlgorithms,
      logger: deps.logger,
      tools: async () => {
        const lt = await (await deps.pki()).longTerm();
        return { ...lt, anchorsDer: lt.pki.cas.map((g) => g.caCertDer) };
      },
    }),
  'send-reminders': (deps) => sendRemindersJob({ ...transitionDeps(deps), config: deps.config }),
  'warn-expiring': (deps) => warnExpiringJob({ ...transitionDeps(deps), config: deps.config }),
  'purge-documents': (deps) => purgeDocumentsJob(deps),
  'sweep-orphan-blobs': (deps) => sweepOrphanBlobsJob(deps),
};

const transitionDeps = ({ db, clock, wake }: JobDeps) => ({
  db,
  clock,
  emit: createEmitter(clock),
  mail: createMailQueue(clock),
  sms: createSmsQueue(clock),
  wake,
});

/** The job catalogue; what a caller does not pass (the CLI passes little) is built from the config on first use. */
export function scheduledJobs(
  deps: Pick<JobDeps, 'db' | 'clock' | 'config'> & Partial<Omit<JobDeps, 'db' | 'clock' | 'config'>>,
): JobCatalogue {
  let pki: Promise<PkiServices> | null = null;
  const full: JobDeps = {
    wake: noWake,
    blobs: createBlobStore(deps.db, deps.clock, deps.config.dataDir),
    workerId: newWorkerId(),
    pki: () => (pki ??= createPkiServices(deps.config, deps.clock)),
    ...deps,
  };
  return Object.fromEntries(Object.entries(JOBS).map(([name, job]) => [name, job(full)]));
}

export type RuntimeOptions = {
  api: boolean;
  worker: boolean;
  clock?: Clock;
  logger?: Logger | false;
  limiter?: RateLimiter;
  db?: Db;
  /** Webhook response timeout; tests shorten it, production keeps the spec's 15 s. */
  deliveryTimeoutMs?: number;
  keyring?: PkiOptions['keyring']; // secrets at rest; absent: prepared from the config (may refuse start)
};

export type Runtime = {
  config: Config;
  db: Db;
  clock: Clock;
  app: App | null;
  mailer: Mailer;
  sms: SmsSender;
  blobs: BlobStore;
  dispatcher: Dispatcher | null;
  scheduler: Scheduler | null;
  /** Runs every kind of due background work once, repeating until nothing is left (tests). */
  work(): Promise<void>;
  /** Runs one scheduled job now (tests; `signet jobs run` builds its own catalogue). */
  runJob(name: string): Promise<Record<string, unknown>>;
  /** Starts the background loops (worker processes). */
  start(): void;
  /** Drains in-flight work and closes everything, the database last. */
  close(): Promise<void>;
};

// The PKI and sealing modules (pkijs, @peculiar/x509, pdf-lib) load with the first seal, not at start. The sealer
// follows the PKI's generations: when a new one is due, the next seal uses it (and its own worker pool).
export async function createPkiServices(config: Config, clock: Clock, keyring: PkiOptions['keyring'] = null) {
  const [{ createPkiManager }, { createTsaClient }, { createSealer }, { createValidationSource }, revocation] =
    await Promise.all([
      import('./pki/pki.js'),
      import('./pki/tsa-client.js'),
      import('./documents/pdf/seal.js'),
      import('./pki/validation-data.js'),
      import('./pki/revocation-fetch.js'),
    ]);
  const manager = createPkiManager({
    dataDir: config.dataDir,
    clock,
    sealP12: config.sealP12 ?? undefined,
    sealP12Password: config.sealP12Password,
    publicBaseUrl: config.baseUrl,
    keyring,
  });
  const trustedTsaCas = config.tsaCaFile ? pemCertsToDer(await fs.readFile(config.tsaCaFile, 'utf8')) : undefined;
  const externalTsa = config.tsaUrl
    ? createTsaClient({ url: config.tsaUrl, clock, trustedCaDer: trustedTsaCas })
    : undefined;
  // Foreign certificates (SEAL_P12's chain, an external TSA's) get their issuers' published CRLs.
  const foreign =
    config.sealP12 || config.tsaUrl
      ? revocation.createRevocationFetcher({ clock, allowPrivateNetwork: config.allowPrivateNetwork })
      : undefined;
  /** What long-term steps need as of now: the TSA, where revocation data comes from, the TSA's known issuers. */
  // Built once per generation: the validation source keeps its per-second CRL and parsed CA certificates.
  let built: { pki: Pki; lt: ReturnType<typeof toolsFor> } | null = null;
  const toolsFor = (pki: Pki) => ({
    pki,
    tsa: externalTsa ?? pki.localTsa,
    source: createValidationSource({ cas: pki.cas.map((g) => g.ca), clock, foreign }),
    tsaIssuersDer: externalTsa ? (trustedTsaCas ?? []) : pki.cas.map((g) => g.caCertDer),
  });
  const longTerm = async () => {
    const pki = await manager.current();
    if (built?.pki !== pki) built = { pki, lt: toolsFor(pki) };
    return built.lt;
  };
  let current: { generation: number; sealer: Sealer } | null = null;
  const sealer: Sealer = {
    async seal(pdf, meta) {
      const lt = await longTerm();
      if (current?.generation !== lt.pki.generation) {
        const old = current;
        current = {
          generation: lt.pki.generation,
          sealer: createSealer({ pki: lt.pki, tsa: externalTsa, clock, longTerm: lt }),
        };
        void old?.sealer.close();
      }
      return current.sealer.seal(pdf, meta);
    },
    async close() {
      await current?.sealer.close();
      await foreign?.close();
    },
  };
  return { sealer, longTerm };
}

export type PkiServices = Awaited<ReturnType<typeof createPkiServices>>;
/** The CA side of the PKI for the public routes and the verifier; loads the CAs on first use, never a seal key. */
export function trustStoreFor(config: Config, clock: Clock, keyring: PkiOptions['keyring'] = null): TrustStore {
  const pki = () => import('./pki/pki.js');
  return createTrustStore({
    clock,
    loadCas: async () =>
      (await pki()).loadOrCreateCas({ dataDir: config.dataDir, clock, publicBaseUrl: config.baseUrl, keyring }),
    generationNumbers: async () => (await pki()).generationNumbers(config.dataDir),
    // An external TSA's CAs and the qualified provider's: their signatures are reported as trusted.
    extraAnchors: async () => [
      ...(config.tsaCaFile ? pemCertsToDer(await fs.readFile(config.tsaCaFile, 'utf8')) : []),
      ...(config.qes ? pemCertsToDer(await fs.readFile(config.qes.caFile, 'utf8')) : []),
    ],
  });
}

export async function createRuntime(config: Config, opts: RuntimeOptions): Promise<Runtime> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger || undefined;
  const workerId = newWorkerId();
  const db = opts.db ?? (await openDb(config.databaseUrl, dbOptions(config)));
  const keyring = opts.keyring !== undefined ? opts.keyring : await prepareSecretsOrClose(config, db, !opts.db, logger);
  const limiter = opts.limiter ?? (await createRateLimiter({ redisUrl: config.redisUrl, clock, logger }));
  const blobs = createBlobStore(db, clock, config.dataDir);
  const mailer = createMailer({
    db,
    clock,
    blobs,
    smtpUrl: config.smtpUrl,
    from: `Signet <${config.mailFrom}>`,
    logger,
    workerId,
  });
  const smsSender = createSmsSender({
    db,
    clock,
    transport: config.sms ? createTwilioTransport(config.sms) : null,
    logger,
    workerId,
  });
  const files: FileFetcher = createFileFetcher({ allowPrivateNetwork: config.allowPrivateNetwork });
  const emit = createEmitter(clock);
  const dispatcher = opts.worker
    ? createDispatcher({
        db,
        clock,
        workerId,
        allowPrivateNetwork: config.allowPrivateNetwork,
        logger,
        timeoutMs: opts.deliveryTimeoutMs,
        leaseMs: config.deliveryLeaseMs,
        keyring,
      })
    : null;
  let sealing: Runner | null = null;
  let bulkSends: Runner | null = null;
  const wake: Wakers = {
    deliveries: () => dispatcher?.wake(),
    mail: () => mailer.wake(),
    sealing: () => sealing?.wake(),
    sms: () => smsSender.wake(),
    bulkSends: () => bulkSends?.wake(),
  };
  // The PKI (and its worker pool) is loaded on first use, so API-only processes never touch the seal key.
  let pkiServices: Promise<PkiServices> | null = null;
  const pkiNow = () => (pkiServices ??= createPkiServices(config, clock, keyring));
  const sealer: Pick<Sealer, 'seal'> = { seal: async (pdf, meta) => (await pkiNow()).sealer.seal(pdf, meta) };
  if (opts.worker) {
    sealing = createSealingRunner({
      db,
      clock,
      blobs,
      emit,
      mail: mailer,
      sms: smsSender,
      wake,
      pdf: pdfEngine,
      sealer,
      baseUrl: config.baseUrl,
      workerId,
      logger,
    });
    bulkSends = createBulkSendRunner({
      db,
      clock,
      emit,
      mail: mailer,
      sms: smsSender,
      wake,
      blobs,
      pdf: pdfEngine,
      files,
      config,
      workerId,
      logger,
    });
  }
  // A configured provider is checked now (one line and no start when unusable); its signature timestamps come from
  // the seal's TSA, so an API process that serves qualified signers loads the PKI on their first signature.
  const qes = opts.api
    ? await createQesService(config, clock, async () => (await (await pkiNow()).longTerm()).tsa)
    : null;
  const jobs = scheduledJobs({ db, clock, wake, config, blobs, workerId, pki: pkiNow, logger });
  const scheduler = opts.worker ? createScheduler({ db, clock, workerId, logger, jobs }) : null;
  let unwatchWork: (() => void) | undefined;

  const app = opts.api
    ? await buildApp({
        config,
        db,
        clock,
        limiter,
        logger: opts.logger ?? false,
        mail: mailer,
        sms: smsSender,
        blobs,
        files,
        pdf: pdfEngine,
        trust: trustStoreFor(config, clock, keyring),
        wake,
        qes,
        keyring,
      })
    : null;

  return {
    config,
    db,
    clock,
    app,
    mailer,
    sms: smsSender,
    blobs,
    dispatcher,
    scheduler,
    async work() {
      for (let round = 0; round < 20; round++) {
        const bulkSent = bulkSends ? await bulkSends.runOnce() : 0;
        const sealed = sealing ? await sealing.runOnce() : 0;
        const mailed = await mailer.flush();
        const texted = await smsSender.flush();
        const delivered = dispatcher ? await dispatcher.runOnce() : 0;
        if (bulkSent + sealed + mailed + texted + delivered === 0) return;
      }
    },
    runJob: (name) => runJob(jobs, name),
    start() {
      // Work committed by another process (an API instance, the CLI) starts an idle runner now, not at its next poll.
      const byTable = { deliveries: wake.deliveries, mail_outbox: wake.mail, sms_outbox: wake.sms };
      if (opts.worker) unwatchWork ??= wakeOnWork(db, byTable, Object.values(wake));
      dispatcher?.start();
      scheduler?.start();
      sealing?.start();
      bulkSends?.start();
      if (opts.worker) {
        mailer.start();
        smsSender.start();
      }
    },
    async close() {
      unwatchWork?.();
      await app?.close();
      await Promise.all([dispatcher?.stop(), scheduler?.stop(), sealing?.stop(), bulkSends?.stop()]);
      await mailer.close();
      await smsSender.close();
      await files.close();
      await qes?.close();
      if (pkiServices) await (await pkiServices).sealer.close();
      await closePdfWorkers();
      await limiter.close();
      if (!opts.db) await db.close();
    },
  };
}
