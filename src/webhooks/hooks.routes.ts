import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Db } from '../db/db.js';
import type { Clock } from '../lib/clock.js';
import { apiError } from '../http/errors.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { serialiseOnce } from '../http/serialise-once.js';
import { checkOutboundUrl } from '../lib/outbound.js';
import { EVENT_NAMES, isEventName, testEventFields } from './events.js';
import { cachedHooks, createHook, deleteHook, findHook, listHooks, presentHook } from './hooks.repo.js';
import type { Emit } from './outbox.repo.js';
import { listDeliveries } from './deliveries.repo.js';

export const MAX_HOOK_EVENTS = 10;

const HookView = Type.Object({
  id: Type.String(),
  target_url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Type.String(),
  document_id: Type.Union([Type.String(), Type.Null()]),
});
const HookCreated = Type.Object({ ...HookView.properties, secret: Type.String() });
const CreateHookBody = Type.Object(
  {
    target_url: Type.String({ minLength: 1, maxLength: 2048 }),
    events: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), { description: `Event names (${EVENT_NAMES.join(', ')}); empty = all.` }),
    ),
  },
  { additionalProperties: false },
);

export type HooksDeps = { db: Db; clock: Clock; emit: Emit; allowPrivateNetwork: boolean; wakeDispatcher: () => void };

/** Validates the event filter: known names only, at most 10 distinct; duplicates collapse. */
export function validateEventFilter(events: string[]): string[] {
  const unique = [...new Set(events)];
  const unknown = unique.find((e) => !isEventName(e));
  if (unknown !== undefined) {
    throw apiError('invalid_request', {
      message: `Unknown event name "${unknown.slice(0, 100)}".`,
      meta: { field: 'events', value: unknown.slice(0, 100) },
    });
  }
  if (unique.length > MAX_HOOK_EVENTS) {
    throw apiError('invalid_request', {
      message: `At most ${MAX_HOOK_EVENTS} named events per hook; use an empty list for all events.`,
      meta: { field: 'events', max: MAX_HOOK_EVENTS },
    });
  }
  return unique;
}

export async function validateTargetUrl(raw: string, allowPrivateNetwork: boolean): Promise<string> {
  const r = await checkOutboundUrl(raw, { allowPrivateNetwork });
  if (!r.ok) {
    throw apiError('invalid_request', { message: `target_url refused: ${r.reason}.`, meta: { field: 'target_url', reason: r.reason } });
  }
  return r.url.toString();
}

export async function hooksRoutes(fastify: FastifyInstance, deps: HooksDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const sendHookList = serialiseOnce();
  const tags = ['Webhooks'];

  app.post(
    '/v1/hooks',
    {
      schema: {
        tags,
        summary: 'Subscribe a webhook (REST hook). The secret is returned once.',
        body: CreateHookBody,
        response: { 201: HookCreated, ...errorResponses(400, 409, 422, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      const { workspace } = authOf(req);
      const events = validateEventFilter(req.body.events ?? []);
      const targetUrl = await validateTargetUrl(req.body.target_url, deps.allowPrivateNetwork);
      const hook = await createHook(
        deps.db.kysely,
        { workspaceId: workspace.id, targetUrl, events, source: 'api' },
        deps.clock.now(),
      );
      return reply.code(201).send(presentHook(hook, true) as never);
    },
  );

  app.get(
    '/v1/hooks',
    { schema: { tags, summary: "List the workspace's hooks (never the secret).", response: { 200: Type.Array(HookView), ...errorResponses(...AUTH_ERRORS) } } },
    (req, reply) => {
      const { workspace } = authOf(req);
      // The hottest read in the API: answered synchronously, serialised once, while the cached list is current.
      const cached = cachedHooks(deps.db.kysely, workspace.id, req.dataVersion);
      if (cached !== undefined) return sendHookList(reply, cached, () => cached.map((h) => presentHook(h))) as never;
      return listHooks(deps.db.kysely, workspace.id, req.dataVersion).then((rows) => rows.map((h) => presentHook(h))) as never;
    },
  );

  app.delete(
    '/v1/hooks/:id',
    { schema: { tags, summary: 'Unsubscribe a hook.', params: IdParam, response: { 204: Type.Null(), ...errorResponses(404, ...AUTH_ERRORS) } } },
    async (req, reply) => {
      const { workspace } = authOf(req);
      if (!(await deleteHook(deps.db.kysely, workspace.id, req.params.id, deps.clock.now()))) throw apiError('not_found');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/hooks/:id/test',
    {
      schema: {
        tags,
        summary: 'Send the synthetic test event (signing_request.sent with test: true) to this hook.',
        params: IdParam,
        response: { 202: Type.Object({ event_id: Type.String(), hook_id: Type.String() }), ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      const { workspace } = authOf(req);
      const hook = await findHook(deps.db.kysely, workspace.id, req.params.id);
      if (!hook) throw apiError('not_found');
      const { eventId } = await sendTestEvent(deps, workspace.id, hook.id);
      return reply.code(202).send({ event_id: eventId, hook_id: hook.id });
    },
  );

  app.get(
    '/v1/hooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'Delivery history of a hook: every attempt with time, status, duration and error.',
        params: IdParam,
        response: { 200: Type.Array(Type.Object({}, { additionalProperties: true })), ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req) => {
      const { workspace } = authOf(req);
      const hook = await findHook(deps.db.kysely, workspace.id, req.params.id);
      if (!hook) throw apiError('not_found');
      return (await listDeliveries(deps.db, { workspaceId: workspace.id, hookId: hook.id, limit: 100 })) as never;
    },
  );
}

/** Emits the synthetic test event to one hook; shared by the API and `signet hooks test`. */
export async function sendTestEvent(deps: Pick<HooksDeps, 'db' | 'emit' | 'wakeDispatcher'>, workspaceId: string, hookId: string) {
  const r = await deps.db.kysely.transaction().execute((trx) =>
    deps.emit(trx, 'signing_request.sent', workspaceId, testEventFields(), { onlyHookId: hookId, documentId: null }),
  );
  deps.wakeDispatcher();
  return r;
}
