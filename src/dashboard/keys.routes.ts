// Overview and Developers → API keys (wiring; the rules are in dashboard.service.ts and keys/keys.service.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { presentKey } from '../keys/presenters.js';
import {
  canManage,
  createKey,
  keyUses,
  overview,
  revokeKey,
  setKeyList,
  workspaceKey,
  workspaceKeys,
  type DashboardDeps,
} from './dashboard.service.js';
import type { PeopleDeps } from './people.service.js';
import { field, notice, page, type Form, type Notices } from './render.js';

const SAVED: Notices = { ips: 'key.ipsSaved', origins: 'key.originsSaved' };

export async function keysRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
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
    const uses = await keyUses(deps, req.viewer!, key.id, (req.query as Form).before);
    return page(reply, req, 'key.eta', {
      ...uses,
      key,
      canManage: canManage(req.viewer!),
      ipsText: key.allowed_ips.join('\n'),
      originsText: key.allowed_origins.join('\n'),
      notice: notice(req, SAVED, (req.query as Form).saved),
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
}
