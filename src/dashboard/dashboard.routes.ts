// The workspace dashboard under /dashboard: server-rendered pages (Eta, autoescaped) that work without JavaScript
// (forms and POST-redirect-GET), registered in app.ts's `keyless` plugin (per-address limit; never an API key's IP
// allowlist). Wiring only: people.service.ts signs people in, dashboard.service.ts reads and acts per workspace.
// Every page: the role roles.ts's table names for it (a session from people.service.ts, else a redirect to sign-in;
// a signed-in person below the route's role gets the 403 page; a route the table lacks is refused to all and logged);
// a CSRF token on every form post; strict headers from helmet (no inline script, no framing); never cached.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import view from '@fastify/view';
import { Eta } from 'eta';
import { migrationApplied } from '../db/migrate.js';
import { createFeatureGate } from '../http/feature-gate.js';
import { ApiError } from '../lib/errors.js';
import { cspDirectives } from '../web/headers.js';
import type { DashboardDeps } from './dashboard.service.js';
import { NotAllowed, viewerOf, type PeopleDeps, type Viewer } from './people.service.js';
import { page, say, type Form } from './render.js';
import type { DashboardKey } from './words.js';
import { peopleRoutes } from './people.routes.js';
import { keysRoutes } from './keys.routes.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { documentsRoutes } from './documents.routes.js';
import { workspaceRoutes } from './workspace.routes.js';
import { sendRoutes } from './send.routes.js';
import { templatesRoutes } from './templates.routes.js';
import { bulkRoutes } from './bulk.routes.js';
import { SESSION_COOKIE } from './session-cookie.js';
import { verdict } from './roles.js';

declare module 'fastify' {
  interface FastifyRequest {
    viewer: Viewer | null;
  }
}

const views = path.join(path.dirname(fileURLToPath(import.meta.url)), 'views');

export async function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  const secure = deps.config.baseUrl.startsWith('https:');
  const available = createFeatureGate(() => migrationApplied(deps.db, '007-dashboard'));

  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: cspDirectives({
        scripts: ['self'],
        styles: ['self'],
        images: ['self', 'data:'],
        formActions: ['self'],
        frameAncestors: ['none'],
        baseUri: ['none'],
        objects: ['none'],
      }),
    },
    referrerPolicy: { policy: 'same-origin' },
    // Strict-Transport-Security is app-wide (http/tls.ts).
    hsts: false,
  });
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(cookie);
  await app.register(csrf, {
    cookieKey: 'signet_csrf',
    cookieOpts: { path: '/dashboard', httpOnly: true, sameSite: 'strict', secure },
    getToken: (req) => (req.body as Form | undefined)?._csrf,
  });
  await app.register(view, {
    engine: { eta: new Eta({ views, autoEscape: true, cache: true }) },
    templates: views,
    production: true,
  });
  app.decorateRequest('viewer', null);

  // Who is asking, for every page; pages that need a person send the rest to sign-in.
  app.addHook('preHandler', async (req, reply) => {
    if (!(await available.available())) {
      reply.code(503).header('retry-after', '30');
      return page(reply, req, 'error.eta', {
        heading: say(req, { key: 'error.unavailable' }),
        message: say(req, { key: 'error.unavailableDetail' }),
      });
    }
    req.viewer = await viewerOf(deps, req.cookies[SESSION_COOKIE]);
    // The one role check (roles.ts); the not-found handler has no route and needs a signed-in person.
    const v = verdict(req.method, req.is404 ? undefined : req.routeOptions.url, req.viewer?.role ?? null);
    if (v.pass) return;
    if (v.signIn) {
      const next = req.method === 'GET' ? `?next=${encodeURIComponent(req.url)}` : '';
      return reply.redirect(`/dashboard/sign-in${next}`, 303);
    }
    if (v.unlisted)
      req.log.error({ method: req.method, route: req.routeOptions.url }, 'dashboard route missing from roles.ts');
    throw new NotAllowed(v.reason);
  });
  app.addHook('preHandler', (req, reply, done) =>
    req.method === 'POST' ? app.csrfProtection(req, reply, done) : done(),
  );
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store');
  });

  app.setErrorHandler(async (err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status =
      err instanceof ApiError
        ? err.status
        : err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET'
          ? 403
          : (err.statusCode ?? 500);
    if (status >= 500) req.log.error({ err }, 'dashboard page failed');
    // A refusal the API words (its catalogue is English by contract) keeps its English, marked as such.
    const fromApi = status === 403 && err instanceof ApiError && !(err instanceof NotAllowed);
    const [heading, message]: [DashboardKey, DashboardKey | null] =
      status === 404
        ? ['error.notFound', 'error.notFoundDetail']
        : status === 403 && err instanceof ApiError
          ? ['error.notAllowed', err instanceof NotAllowed ? err.reason : null]
          : status === 403
            ? ['error.formExpired', 'error.formExpiredDetail']
            : status < 500
              ? ['error.invalid', 'error.invalidDetail']
              : ['error.failed', 'error.failedDetail'];
    reply.code(status);
    return page(reply, req, 'error.eta', {
      heading: say(req, { key: heading }),
      message: message ? say(req, { key: message }) : err.message,
      messageInEnglish: fromApi,
    });
  });
  app.setNotFoundHandler(async (req, reply) => {
    reply.code(404);
    return page(reply, req, 'error.eta', {
      heading: say(req, { key: 'error.notFound' }),
      message: say(req, { key: 'error.nothingHere' }),
    });
  });

  // The pages, each area in its own file; they inherit the hooks above. (`deps` came with this plugin's prefix.)
  const pages = { ...deps, prefix: undefined };
  await app.register(peopleRoutes, pages);
  await app.register(keysRoutes, pages);
  await app.register(webhooksRoutes, pages);
  await app.register(documentsRoutes, pages);
  await app.register(workspaceRoutes, pages);
  await app.register(sendRoutes, pages);
  await app.register(templatesRoutes, pages);
  await app.register(bulkRoutes, pages);
}
