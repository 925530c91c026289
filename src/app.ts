// buildApp(deps): the Fastify instance with every module registered. It never listens; main.ts and tests do.
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import type { Clock } from './lib/clock.js';
import type { RateLimiter } from './ratelimit/ratelimit.js';
import { registerAuth } from './http/auth.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/error-handler.js';
import { registerJsonBody } from './http/json-body.js';
import { ErrorBody } from './http/schemas.js';
import { registerIdempotency } from './idempotency/idempotency.js';
import { createLastUsedRecorder } from './keys/last-used.js';
import { hooksRoutes } from './webhooks/hooks.routes.js';
import { createEmitter, type Emit } from './webhooks/outbox.repo.js';
import { meRoutes } from './workspaces/me.routes.js';
import { retiredRoutes } from './documents/retired.routes.js';
import { documentsRoutes } from './documents/documents.routes.js';
import type { BlobStore } from './documents/blob-store.js';
import type { FileFetcher } from './documents/fetch-file.js';
import { isKnownLocale } from './mail/locales.js';
import { signingRoutes } from './signing/signing.routes.js';
import { signerRoutes } from './signing/signer.routes.js';
import { signerAssetRoutes } from './signing/page/assets.routes.js';
import type { SigningDeps } from './signing/signing.service.js';
import type { MailQueue, PdfEngine } from './signing/ports.js';

export type AppDeps = {
  config: Config;
  db: Db;
  clock: Clock;
  limiter: RateLimiter;
  logger?: Logger | false;
  mailer: MailQueue;
  blobs: BlobStore;
  files: FileFetcher;
  pdf: PdfEngine;
  /** Pokes in-process workers after work was committed; no-ops when the worker runs in another process. */
  wake?: { dispatcher(): void; sealer(): void };
};

export type App = FastifyInstance & {
  emit: Emit;
  /** Writes batched last-used data now (tests and shutdown). */
  flushLastUsed(): Promise<void>;
};

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger || undefined,
    logger: deps.logger ? undefined : false,
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Requests already on an open connection are served while draining (the database closes only afterwards),
    // rather than answered with a body outside the error catalogue.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true } },
  } as never) as unknown as FastifyInstance;

  const emit = createEmitter(deps.clock);
  const lastUsed = createLastUsedRecorder(deps.db);
  const wake = deps.wake ?? { dispatcher: () => undefined, sealer: () => undefined };
  const wakeDispatcher = () => wake.dispatcher();
  const signing: SigningDeps = {
    db: deps.db,
    clock: deps.clock,
    blobs: deps.blobs,
    emit,
    mail: deps.mailer,
    pdf: deps.pdf,
    files: deps.files,
    config: deps.config,
    isKnownLocale,
    wake,
  };
  app.addHook('onClose', async () => lastUsed.close());

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Signet API',
        version: '1.0.0',
        description: 'Electronic signatures: signing requests, sealed PDFs, audit trails and signed webhooks.',
      },
      servers: [{ url: deps.config.baseUrl }, ...(deps.config.aliasBaseUrl ? [{ url: deps.config.aliasBaseUrl }] : [])],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'svk_live_… or lgk_live_…' } } },
      security: [{ bearer: [] }],
    },
  });
  app.addSchema(ErrorBody);

  registerJsonBody(app);
  registerErrorHandling(app);
  registerAuth(app, { db: deps.db, clock: deps.clock, limiter: deps.limiter, lastUsed });
  registerIdempotency(app, { db: deps.db, clock: deps.clock });
  app.decorateRequest('rawBody', undefined);

  await app.register(meRoutes);
  await app.register(hooksRoutes, {
    db: deps.db,
    clock: deps.clock,
    emit,
    allowPrivateNetwork: deps.config.allowPrivateNetwork,
    wakeDispatcher,
  });
  await app.register(retiredRoutes);
  await app.register(signingRoutes, signing);
  await app.register(documentsRoutes, signing);
  await app.register(signerRoutes, signing);
  await app.register(signerAssetRoutes);

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

  return Object.assign(app, { emit, flushLastUsed: () => lastUsed.flush() }) as App;
}
