// The workspace dashboard under /dashboard: server-rendered pages (Eta, autoescaped) that work without JavaScript
// (forms and POST-redirect-GET), registered in app.ts's `keyless` plugin (per-address limit; never an API key's IP
// allowlist). Wiring only: people.service.ts signs people in, dashboard.service.ts reads and acts per workspace.
// Every page: a server-side session (people.service.ts) or a redirect to sign-in; a CSRF token on every form post;
// strict headers from helmet (no inline script, no framing); never cached.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import view from '@fastify/view';
import { Eta } from 'eta';
import { migrationApplied } from '../db/migrate.js';
import { createFeatureGate } from '../http/feature-gate.js';
import { clientAddress } from '../http/request-context.js';
import { ApiError } from '../lib/errors.js';
import { assetUrl } from '../signing/page/assets.routes.js';
import { MAX_HOOK_EVENTS } from '../limits.js';
import { EVENT_NAMES } from '../webhooks/events.js';
import {
  canManage,
  createHook,
  createKey,
  deleteHook,
  hookDeliveries,
  overview,
  replay,
  revokeKey,
  sendTest,
  setKeyList,
  workspaceHook,
  workspaceHooks,
  workspaceKey,
  workspaceKeys,
  type DashboardDeps,
} from './dashboard.service.js';
import { presentKey } from '../keys/presenters.js';
import {
  linkAccount,
  setPasswordWithLink,
  signIn,
  signOut,
  viewerOf,
  type PeopleDeps,
  type Viewer,
} from './people.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** true: the page needs no sign-in (sign-in, set-password). */
    public?: boolean;
  }
  interface FastifyRequest {
    viewer: Viewer | null;
  }
}

export const SESSION_COOKIE = 'signet_session';
const views = path.join(path.dirname(fileURLToPath(import.meta.url)), 'views');
const ASSETS = { pico: assetUrl('pico.min.css'), css: assetUrl('dashboard.css'), js: assetUrl('dashboard.js') };
const fmt = (isoTime: string) => isoTime.replace('T', ' ').slice(0, 16) + ' UTC';
const fmtSeconds = (isoTime: string) => isoTime.replace('T', ' ').slice(0, 19) + ' UTC';

type Form = Record<string, string | undefined>;
const field = (req: FastifyRequest, name: string): string => {
  const v = (req.body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
/** A repeated form field (checkboxes): one value arrives as a string, several as an array. */
const fields = (req: FastifyRequest, name: string): string[] => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
};

export async function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  const secure = deps.config.baseUrl.startsWith('https:');
  const available = createFeatureGate(() => migrationApplied(deps.db, '007-dashboard'));

  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'same-origin' },
    hsts: secure ? { maxAge: 15552000 } : false,
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
        heading: 'The dashboard is not available yet',
        message:
          'This deployment’s database has not been migrated for the dashboard (signet migrate). Try again shortly.',
      });
    }
    req.viewer = await viewerOf(deps, req.cookies[SESSION_COOKIE]);
    if (!req.viewer && !req.routeOptions.config.public) {
      const next = req.method === 'GET' ? `?next=${encodeURIComponent(req.url)}` : '';
      return reply.redirect(`/dashboard/sign-in${next}`, 303);
    }
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
    const [heading, message] =
      status === 404
        ? ['Not found', 'There is nothing here, or it belongs to another workspace.']
        : status === 403 && err instanceof ApiError
          ? ['Not allowed', err.message]
          : status === 403
            ? ['This form has expired', 'Go back, reload the page and try again.']
            : status < 500
              ? ['That did not work', 'The request was not valid.']
              : ['Something went wrong', 'The error was logged. Try again in a moment.'];
    reply.code(status);
    return page(reply, req, 'error.eta', { heading, message });
  });
  app.setNotFoundHandler(async (req, reply) => {
    reply.code(404);
    return page(reply, req, 'error.eta', { heading: 'Not found', message: 'There is nothing here.' });
  });

  /** Renders a page with what every page needs: the person, a fresh CSRF token, the asset URLs. */
  function page(reply: FastifyReply, req: FastifyRequest, name: string, data: Record<string, unknown>) {
    return reply
      .type('text/html; charset=utf-8')
      .viewAsync(name, { viewer: req.viewer, csrf: reply.generateCsrf(), assets: ASSETS, fmt, fmtSeconds, ...data });
  }

  const open = { config: { public: true } };

  app.get('/', async (req, reply) => reply.redirect(req.viewer ? '/dashboard/overview' : '/dashboard/sign-in', 303));

  app.get('/sign-in', open, async (req, reply) => {
    if (req.viewer) return reply.redirect('/dashboard/overview', 303);
    const q = req.query as Form;
    return page(reply, req, 'sign-in.eta', { notice: q.done === 'password' ? 'Your password is set. Sign in.' : null });
  });

  app.post('/sign-in', open, async (req, reply) => {
    const r = await signIn(deps, {
      email: field(req, 'email'),
      password: field(req, 'password'),
      address: clientAddress(req) ?? 'unknown',
      userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
    });
    if (!r.ok) {
      reply.code(401);
      return page(reply, req, 'sign-in.eta', {
        error: 'The e-mail or password is not right.',
        email: field(req, 'email'),
      });
    }
    reply.setCookie(SESSION_COOKIE, r.token, { path: '/dashboard', httpOnly: true, sameSite: 'lax', secure });
    const next = (req.query as Form).next;
    return reply.redirect(next && /^\/dashboard\/[^/\\]/.test(next) ? next : '/dashboard/overview', 303);
  });

  app.post('/sign-out', async (req, reply) => {
    await signOut(deps, req.viewer!);
    reply.clearCookie(SESSION_COOKIE, { path: '/dashboard' });
    return reply.redirect('/dashboard/sign-in', 303);
  });

  app.get<{ Params: { token: string } }>('/set-password/:token', open, async (req, reply) => {
    const found = await linkAccount(deps, req.params.token);
    if (!found) reply.code(410);
    return page(reply, req, 'set-password.eta', {
      invalid: !found,
      email: found?.user.email,
      action: `/dashboard/set-password/${encodeURIComponent(req.params.token)}`,
    });
  });

  app.post<{ Params: { token: string } }>('/set-password/:token', open, async (req, reply) => {
    const r = await setPasswordWithLink(deps, req.params.token, field(req, 'password'), field(req, 'confirm'));
    if (r.ok) {
      reply.clearCookie(SESSION_COOKIE, { path: '/dashboard' });
      return reply.redirect('/dashboard/sign-in?done=password', 303);
    }
    const found = await linkAccount(deps, req.params.token);
    reply.code(found ? 400 : 410);
    return page(reply, req, 'set-password.eta', {
      invalid: !found,
      email: found?.user.email,
      error: r.problem,
      action: `/dashboard/set-password/${encodeURIComponent(req.params.token)}`,
    });
  });

  app.get('/overview', async (req, reply) => page(reply, req, 'overview.eta', await overview(deps, req.viewer!)));

  app.get('/developers/keys', async (req, reply) =>
    page(reply, req, 'keys.eta', { keys: await workspaceKeys(deps, req.viewer!), canManage: canManage(req.viewer!) }),
  );

  // The plaintext is in this one response only (no redirect could carry it without storing it).
  app.post('/developers/keys', async (req, reply) => {
    const r = await createKey(deps, req.viewer!);
    reply.code(201);
    return page(reply, req, 'key-created.eta', { plaintext: r.plaintext, keyId: r.key.id });
  });

  const keyPage = async (req: FastifyRequest, reply: FastifyReply, id: string, extra: Record<string, unknown> = {}) => {
    const key = presentKey(await workspaceKey(deps, req.viewer!, id));
    return page(reply, req, 'key.eta', {
      key,
      canManage: canManage(req.viewer!),
      ipsText: key.allowed_ips.join('\n'),
      originsText: key.allowed_origins.join('\n'),
      notice: ({ ips: 'Allowed IPs saved.', origins: 'Embed origins saved.' } as Form)[(req.query as Form).saved ?? ''],
      ...extra,
    });
  };

  app.get<{ Params: { id: string } }>('/developers/keys/:id', async (req, reply) => keyPage(req, reply, req.params.id));

  for (const which of ['ips', 'origins'] as const) {
    app.post<{ Params: { id: string } }>(`/developers/keys/:id/${which}`, async (req, reply) => {
      const text = field(req, which);
      const r = await setKeyList(deps, req.viewer!, req.params.id, which, text);
      if (r.ok)
        return reply.redirect(`/dashboard/developers/keys/${encodeURIComponent(req.params.id)}?saved=${which}`, 303);
      reply.code(400);
      return keyPage(req, reply, req.params.id, { [`${which}Error`]: r.message, [`${which}Text`]: text });
    });
  }

  app.get<{ Params: { id: string } }>('/developers/keys/:id/revoke', async (req, reply) => {
    const key = presentKey(await workspaceKey(deps, req.viewer!, req.params.id));
    return page(reply, req, 'key-revoke.eta', { key });
  });

  app.post<{ Params: { id: string } }>('/developers/keys/:id/revoke', async (req, reply) => {
    await revokeKey(deps, req.viewer!, req.params.id);
    return reply.redirect(`/dashboard/developers/keys/${encodeURIComponent(req.params.id)}`, 303);
  });

  // ── Webhooks ──────────────────────────────────────────────────────────────────────────────────────────────────
  const hooksPage = async (req: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) =>
    page(reply, req, 'webhooks.eta', {
      hooks: await workspaceHooks(deps, req.viewer!),
      canManage: canManage(req.viewer!),
      eventNames: EVENT_NAMES,
      maxEvents: MAX_HOOK_EVENTS,
      ...extra,
    });

  app.get('/developers/webhooks', async (req, reply) => hooksPage(req, reply));

  // The secret is in this one response only.
  app.post('/developers/webhooks', async (req, reply) => {
    const targetUrl = field(req, 'target_url').trim();
    const events = fields(req, 'events');
    const r = await createHook(deps, req.viewer!, targetUrl, events);
    if (!r.ok) {
      reply.code(400);
      return hooksPage(req, reply, { error: r.message, targetUrl, picked: events });
    }
    reply.code(201);
    return page(reply, req, 'webhook-created.eta', { hook: r.hook });
  });

  type HookParams = { Params: { id: string }; Querystring: Form };
  app.get<HookParams>('/developers/webhooks/:id', async (req, reply) => {
    const hook = await workspaceHook(deps, req.viewer!, req.params.id);
    const q = req.query;
    const history = await hookDeliveries(deps, req.viewer!, hook.id, { status: q.status, before: q.before });
    return page(reply, req, 'webhook.eta', {
      hook,
      canManage: canManage(req.viewer!),
      deliveries: history.deliveries,
      next: history.next,
      filter: q.status === 'failed' || q.status === 'succeeded' ? q.status : null,
      notice: ({ test: 'Test event sent.', replay: 'Delivery replayed.' } as Form)[q.done ?? ''],
    });
  });

  const back = (id: string, done: string) => `/dashboard/developers/webhooks/${encodeURIComponent(id)}?done=${done}`;

  app.post<HookParams>('/developers/webhooks/:id/test', async (req, reply) => {
    await sendTest(deps, req.viewer!, req.params.id);
    return reply.redirect(back(req.params.id, 'test'), 303);
  });

  app.get<HookParams>('/developers/webhooks/:id/delete', async (req, reply) =>
    page(reply, req, 'webhook-delete.eta', { hook: await workspaceHook(deps, req.viewer!, req.params.id) }),
  );

  app.post<HookParams>('/developers/webhooks/:id/delete', async (req, reply) => {
    await deleteHook(deps, req.viewer!, req.params.id);
    return reply.redirect('/dashboard/developers/webhooks', 303);
  });

  app.post<{ Params: { id: string; delivery: string } }>(
    '/developers/webhooks/:id/deliveries/:delivery/replay',
    async (req, reply) => {
      await replay(deps, req.viewer!, req.params.id, req.params.delivery);
      return reply.redirect(back(req.params.id, 'replay'), 303);
    },
  );
}
