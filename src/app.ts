// buildApp(deps): the Fastify instance with every module registered. It never listens; main.ts and tests do.
// Every /v1 route lives in one prefixed plugin that carries the gate (auth, rate limit) and idempotency, so they
// cover unknown /v1 paths too and nothing outside /v1.
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { lazyCompilers } from './http/lazy-compilers.js';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import type { BlobStore } from './documents/blob-store.js';
import type { FileFetcher } from './documents/fetch-file.js';
import type { PdfEngine } from './documents/pdf/engine.js';
import { aliasRewrite } from './http/alias.js';
import { registerAuth } from './http/auth.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling, notFound } from './http/error-handler.js';
import { frontDoor } from './http/front-door.js';
import { registerAddressLimit } from './http/address-limit.js';
import { registerBodyDeadline, serverOptions } from './http/deadlines.js';
import { loadTls, registerHsts, secureContextOptions } from './http/tls.js';
import { registerRequestShape } from './http/request-shape.js';
import { createByteBudget, registerUploadBudget } from './http/upload-budget.js';
import { decorateRequests } from './http/request-context.js';
import { ErrorBody } from './http/schemas.js';
import { registerIdempotency } from './idempotency/idempotency.js';
import { createKeyUseRecorder } from './keys/key-use.js';
import { createLastUsedRecorder } from './keys/last-used.js';
import type { Clock } from './lib/clock.js';
import { DEFAULT_BODY_LIMIT } from './limits.js';
import type { MailQueue } from './mail/outbox.js';
import type { SmsQueue } from './sms/outbox.js';
import type { RateLimiter } from './ratelimit/ratelimit.js';
import { documentsRoutes } from './signing/documents.routes.js';
import { SIGNER_ASSETS } from './signing/signer.assets.js';
import { retiredRoutes } from './signing/retired.routes.js';
import { signerRoutes } from './signing/signer.routes.js';
import { qesRoutes } from './qes/qes.routes.js';
import type { QesService } from './qes/landing.js';
import { copyRoutes } from './signing/copy.routes.js';
import { signingRoutes } from './signing/signing.routes.js';
import type { SigningDeps } from './signing/signing.service.js';
import { noWake, type Wakers } from './signing/transition.js';
import { REVIEW_ASSETS } from './templates/review/review.assets.js';
import { reviewRoutes } from './templates/review/review.routes.js';
import { templatesRoutes } from './templates/templates.routes.js';
import { bulkSendsRoutes } from './templates/bulk-sends.routes.js';
import { hooksRoutes } from './webhooks/hooks.routes.js';
import { createHooksService, type HooksService } from './webhooks/hooks.service.js';
import { createEmitter, type Emit } from './webhooks/outbox.repo.js';
import { meRoutes } from './workspaces/me.routes.js';
import { brandRoutes } from './workspaces/brand.routes.js';
import { embeddedRoutes } from './embedded/embedded.routes.js';
import { EMBED_ASSETS } from './embedded/embed.assets.js';
import { embedRoutes } from './embedded/embed.routes.js';
import { DASHBOARD_ASSETS } from './dashboard/dashboard.assets.js';
import { dashboardRoutes } from './dashboard/dashboard.routes.js';
import { DOCS_ASSETS } from './docs/docs.assets.js';
import { docsRoutes } from './docs/docs.routes.js';
import { apiDescription, finishDocument, onlyTheApi, refResolver } from './docs/openapi.js';
import { registerAssets, type NamesOf } from './web/assets.js';
import type { TrustStore } from './pki/trust.js';
import { trustRoutes } from './verification/trust.routes.js';
import { VERIFY_ASSETS } from './verification/verify.assets.js';
import { verifyPageRoutes } from './verification/verify-page.routes.js';
import { verificationRoutes } from './verification/verification.routes.js';
import { renderTooManyRequestsPage } from './web/html.js';
import type { Keyring } from './lib/secret-box.js';

/** Every feature's static files, served under /assets; a page may link any of them by name. */
const ASSET_TABLES = [
  SIGNER_ASSETS,
  REVIEW_ASSETS,
  EMBED_ASSETS,
  DASHBOARD_ASSETS,
  DOCS_ASSETS,
  VERIFY_ASSETS,
] as const;
declare module './web/assets.js' {
  // An interface, not a type: only an interface merges into web/'s declaration.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface AssetNames extends NamesOf<(typeof ASSET_TABLES)[number]> {}
}

export type AppDeps = {
  config: Config;
  db: Db;
  clock: Clock;
  limiter: RateLimiter;
  logger?: Logger | false;
  mail: MailQueue;
  sms: SmsQueue;
  blobs: BlobStore;
  files: FileFetcher;
  pdf: PdfEngine;
  /** The CA certificate, current CRL and verification anchors (pki/trust.ts). */
  trust: TrustStore;
  /** Pokes in-process workers after work was committed; no-ops when the worker runs in another process. */
  wake?: Wakers;
  /** The qualified signing provider (qes/service.ts); null or absent: signature_level "qes" answers 503. */
  qes?: QesService | null;
  /** Secrets at rest (secrets/keyring.ts); absent: new hook secrets are stored plain. */
  keyring?: Keyring | null;
};

export type App = FastifyInstance & {
  emit: Emit;
  hooks: HooksService;
  /** Writes batched last-used data now (tests and shutdown). */
  flushLastUsed(): Promise<void>;
  /** Writes the batched key-use audit rows now (tests). */
  flushKeyUses(): Promise<void>;
  /** Every route as registered (HEAD twins included), and whether it takes a body: what the every-route tests walk. */
  routeList: readonly { method: string; url: string; body: boolean }[];
  /** Compiles every route's validators and serializers now (they compile on first use otherwise); for tests. */
  compileSchemas(): void;
};

export async function buildApp(deps: AppDeps): Promise<App> {
  const compilers = lazyCompilers();
  const tls = deps.config.tls ? await loadTls(deps.config.tls) : null;
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
    // The alias address's path prefix comes off before routing (http/alias.ts).
    rewriteUrl: aliasRewrite(deps.config.aliasBaseUrl),
    ...serverOptions(deps.config.limits, tls ? secureContextOptions(tls) : undefined),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true } },
    schemaController: {
      compilersFactory: { buildValidator: compilers.buildValidator, buildSerializer: compilers.buildSerializer },
    },
  } as never) as unknown as FastifyInstance;

  const routeList: { method: string; url: string; body: boolean }[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routeList.push({ method, url: r.url, body: Boolean(r.schema?.body) });
  });

  const emit = createEmitter(deps.clock);
  const wake = deps.wake ?? noWake;
  const lastUsed = createLastUsedRecorder(deps.db);
  const keyUses = createKeyUseRecorder(deps.db, { logger: deps.logger || undefined });
  const hooks = createHooksService({
    db: deps.db,
    clock: deps.clock,
    emit,
    allowPrivateNetwork: deps.config.allowPrivateNetwork,
    wakeDeliveries: () => wake.deliveries(),
    keyring: deps.keyring,
  });
  const signing: SigningDeps = {
    db: deps.db,
    clock: deps.clock,
    emit,
    mail: deps.mail,
    sms: deps.sms,
    wake,
    blobs: deps.blobs,
    pdf: deps.pdf,
    files: deps.files,
    config: deps.config,
    qesProvider: deps.qes?.name ?? null,
    keyring: deps.keyring,
  };
  const verification = { db: deps.db, clock: deps.clock, pdf: deps.pdf, trust: deps.trust };
  app.addHook('onClose', async () => lastUsed.close());
  app.addHook('onClose', async () => keyUses.close());

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Signet API',
        version: '1.0.0',
        description: apiDescription(),
      },
      servers: [{ url: deps.config.baseUrl }, ...(deps.config.aliasBaseUrl ? [{ url: deps.config.aliasBaseUrl }] : [])],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'svk_live_… or lgk_live_…' } },
      },
      security: [{ bearer: [] }],
    },
    transform: onlyTheApi,
    transformObject: finishDocument,
    refResolver,
  });
  app.addSchema(ErrorBody);

  decorateRequests(app, deps.config.trustProxy);
  registerHsts(app, deps.config.baseUrl);
  registerRequestShape(app);
  registerErrorHandling(app);
  registerBodyDeadline(app, deps.config.limits);
  registerUploadBudget(app, createByteBudget(deps.config.limits.maxBodiesInFlightBytes));
  const assets = registerAssets(app, ASSET_TABLES);

  await app.register(
    async (v1) => {
      registerAuth(v1, { db: deps.db, clock: deps.clock, limiter: deps.limiter, lastUsed, keyUses });
      registerIdempotency(v1, { db: deps.db, clock: deps.clock });
      // Unknown /v1 paths pass the gate first: they are authenticated and counted, then 404.
      v1.setNotFoundHandler(notFound);
      await v1.register(meRoutes);
      await v1.register(hooksRoutes, { hooks });
      await v1.register(retiredRoutes);
      await v1.register(signingRoutes, signing);
      await v1.register(documentsRoutes, signing);
      await v1.register(templatesRoutes, signing);
      await v1.register(bulkSendsRoutes, signing);
      await v1.register(embeddedRoutes, signing);
      await v1.register(verificationRoutes, verification);
      v1.get('/openapi.json', { schema: { hide: true }, config: { auth: false } }, async () => app.swagger());
    },
    { prefix: '/v1' },
  );
  // Pages and actions that need no API key: each address is limited here. Later key-less pages register in it too.
  await app.register(async (keyless) => {
    registerAddressLimit(keyless, {
      limiter: deps.limiter,
      limit: deps.config.limits.publicRateLimit,
      page: (req, seconds) =>
        renderTooManyRequestsPage(req.headers['accept-language'], seconds, { stylesheets: [assets.url('signer.css')] }),
    });
    await keyless.register(signerRoutes, signing);
    await keyless.register(qesRoutes, { ...signing, qes: deps.qes ?? null });
    await keyless.register(copyRoutes, signing);
    await keyless.register(reviewRoutes, signing);
    await keyless.register(embedRoutes, signing);
    await keyless.register(dashboardRoutes, { ...signing, hooks, limiter: deps.limiter, prefix: '/dashboard' });
    await keyless.register(docsRoutes);
    await keyless.register(trustRoutes, { trust: deps.trust });
    await keyless.register(verifyPageRoutes, verification);
    await keyless.register(brandRoutes, { db: deps.db, blobs: deps.blobs });
  });
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  app.get('/', { schema: { hide: true } }, frontDoor);

  return Object.assign(app, {
    emit,
    hooks,
    flushLastUsed: () => lastUsed.flush(),
    flushKeyUses: () => keyUses.flush(),
    routeList,
    compileSchemas: compilers.compileAll,
  }) as App;
}
