// /v1/hooks: subscriptions for connectors (REST hooks), their test event and delivery history. Wiring only.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { apiError } from '../lib/errors.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { CreateHookBody, DeliveryList, HookCreated, HookView, TestEventSent } from './hooks.schemas.js';
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
        response: { 200: Type.Array(HookView), ...errorResponses(...AUTH_ERRORS) },
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
        params: IdParam,
        response: { 200: DeliveryList, ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req) => {
      const list = await hooks.deliveries(authOf(req).workspace.id, req.params.id);
      if (!list) throw apiError('not_found');
      return list;
    },
  );
}
