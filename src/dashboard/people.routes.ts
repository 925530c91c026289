// Sign-in, sign-out and set-password pages (wiring; the rules are in people.service.ts).
import type { FastifyInstance } from 'fastify';
import { clientAddress } from '../http/request-context.js';
import { addressBucket } from '../lib/ip.js';
import type { DashboardDeps } from './dashboard.service.js';
import { SESSION_COOKIE } from './session-cookie.js';
import {
  changePassword,
  linkAccount,
  setPasswordWithLink,
  signIn,
  signOut,
  type PeopleDeps,
} from './people.service.js';
import { field, page, say, type Form } from './render.js';

export async function peopleRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  const secure = deps.config.baseUrl.startsWith('https:');

  app.get('/', async (req, reply) => reply.redirect(req.viewer ? '/dashboard/overview' : '/dashboard/sign-in', 303));

  app.get('/sign-in', async (req, reply) => {
    if (req.viewer) return reply.redirect('/dashboard/overview', 303);
    const q = req.query as Form;
    return page(reply, req, 'sign-in.eta', {
      notice: q.done === 'password' ? say(req, { key: 'signIn.passwordSet' }) : null,
    });
  });

  app.post('/sign-in', async (req, reply) => {
    const r = await signIn(deps, {
      email: field(req, 'email'),
      password: field(req, 'password'),
      // IPv6 callers by their /64, as the per-address page limit counts them.
      address: addressBucket(clientAddress(req)) ?? 'unknown',
      userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
    });
    if (!r.ok) {
      reply.code(401);
      return page(reply, req, 'sign-in.eta', {
        error: say(req, { key: 'signIn.wrong' }),
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

  app.get<{ Params: { token: string } }>('/set-password/:token', async (req, reply) => {
    const found = await linkAccount(deps, req.params.token);
    if (!found) reply.code(410);
    return page(reply, req, 'set-password.eta', {
      invalid: !found,
      email: found?.user.email,
      action: `/dashboard/set-password/${encodeURIComponent(req.params.token)}`,
    });
  });

  app.post<{ Params: { token: string } }>('/set-password/:token', async (req, reply) => {
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
      error: say(req, r.problem),
      action: `/dashboard/set-password/${encodeURIComponent(req.params.token)}`,
    });
  });

  app.get('/account', async (req, reply) => page(reply, req, 'account.eta'));

  app.post('/account/password', async (req, reply) => {
    const r = await changePassword(deps, req.viewer!, {
      current: field(req, 'current'),
      password: field(req, 'password'),
      confirm: field(req, 'confirm'),
    });
    if (!r.ok) {
      reply.code(400);
      return page(reply, req, 'account.eta', { error: say(req, r.problem) });
    }
    reply.clearCookie(SESSION_COOKIE, { path: '/dashboard' });
    return reply.redirect('/dashboard/sign-in?done=password', 303);
  });
}
