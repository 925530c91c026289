// Developers → Webhooks (wiring; the rules are in dashboard.service.ts and webhooks/hooks.service.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_HOOK_EVENTS } from '../limits.js';
import { EVENT_NAMES } from '../webhooks/events.js';
import {
  canManage,
  createHook,
  deleteHook,
  hookDeliveries,
  replay,
  sendTest,
  workspaceHook,
  workspaceHooks,
  type DashboardDeps,
} from './dashboard.service.js';
import type { PeopleDeps } from './people.service.js';
import { field, fields, notice, page, type Form, type Notices } from './render.js';

const DONE: Notices = { test: 'webhook.testSent', replay: 'webhook.replayed' };

export async function webhooksRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
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
      notice: notice(req, DONE, q.done),
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
