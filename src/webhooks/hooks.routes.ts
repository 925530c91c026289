// /v1/hooks: subscriptions for connectors (REST hooks), their test event, delivery history and replay. Wiring only.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { apiError } from '../lib/errors.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import {
  CreateHookBody,
  DeliveryHistoryQuery,
  DeliveryList,
  DeliveryReplayed,
  HookCreated,
  HookDeliveryParams,
  HooksOut,
  TestEventSent,
} from './hooks.schemas.js';
import type { HookList, HooksService } from './hooks.service.js';

const sendList = (reply: FastifyReply, list: HookList) =>
  void reply.type('application/json; charset=utf-8').send(list.json as never);

export async function hooksRoutes(fastify: FastifyInstance, { hooks }: { hooks: HooksService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Webhooks'];

  app.post(
    '/hooks',
    {
      schema: {
        tags,
        summary: 'Subscribe a webhook (REST hook). The secret is returned once.',
        body: CreateHookBody,
        response: { 201: HookCreated, ...errorResponses(400, 409, 422, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => reply.code(201).send(await hooks.create(authOf(req).workspace.id, req.body)),
  );

  app.get(
    '/hooks',
    {
      schema: {
        tags,
        summary: "List the workspace's hooks (never the secret).",
        response: { 200: HooksOut, ...errorResponses(...AUTH_ERRORS) },
      },
    },
    // The hottest read of the API: answered without a promise while the cached list is current, with its JSON
    // text written once per list (hooks.service.ts).
    (req, reply) => {
      const workspaceId = authOf(req).workspace.id;
      const cached = hooks.cachedList(workspaceId, req.dataVersion);
      if (cached === undefined) return hooks.list(workspaceId, req.dataVersion).then((list) => sendList(reply, list));
      sendList(reply, cached);
    },
  );

  app.delete(
    '/hooks/:id',
    {
      schema: {
        tags,
        summary: 'Unsubscribe a hook.',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      if (!(await hooks.remove(authOf(req).workspace.id, req.params.id))) throw apiError('not_found');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/hooks/:id/test',
    {
      schema: {
        tags,
        summary: 'Send the synthetic test event (signing_request.sent with test: true) to this hook.',
        params: IdParam,
        response: { 202: TestEventSent, ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      const sent = await hooks.sendTest(authOf(req).workspace.id, req.params.id);
      if (!sent) throw apiError('not_found');
      return reply.code(202).send(sent);
    },
  );

  app.get(
    '/hooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'Delivery history of a hook: every attempt with time, status, duration and error.',
        description:
          'Newest first, with each delivery’s state and next attempt time. `?status=` filters (`failed` = `retrying` ' +
          'and `giving_up`); `?before=<id of the last delivery seen>` gives the next page, up to `?limit=` (100).',
        params: IdParam,
        querystring: DeliveryHistoryQuery,
        response: { 200: DeliveryList, ...errorResponses(400, 404, ...AUTH_ERRORS) },
      },
    },
    async (req) => {
      const page = await hooks.deliveries(authOf(req).workspace.id, req.params.id, req.query);
      if (!page) throw apiError('not_found');
      return page.deliveries;
    },
  );

  app.post(
    '/hooks/:id/deliveries/:delivery_id/replay',
    {
      schema: {
        tags,
        summary: 'Replay a delivery: its event goes again to the hook as a new delivery, due now.',
        description:
          'Allowed from any state. The event id and body are the same (receivers deduplicate on the id); the new ' +
          'delivery has its own attempts and schedule. A deleted hook is 404, like a missing one.',
        params: HookDeliveryParams,
        response: { 202: DeliveryReplayed, ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      const replayed = await hooks.replay(authOf(req).workspace.id, req.params.id, req.params.delivery_id);
      if (!replayed) throw apiError('not_found');
      return reply.code(202).send(replayed);
    },
  );
}
