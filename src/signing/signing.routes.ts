// /v1/signing-requests: create, read, remind, withdraw. Wiring only; remind and withdraw are in sender.service.ts.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { apiError } from '../lib/errors.js';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { authOf, clientMeta } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { createSigningRequest } from './create.js';
import { presentRequest } from './presenters.js';
import { CreateBody, Created, RequestOut } from './signing.schemas.js';
import { getRequest } from './documents.service.js';
import { remindRequest, withdrawRequest } from './sender.service.js';
import type { SigningDeps } from './signing.service.js';

export async function signingRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Signing requests'];

  app.post(
    '/signing-requests',
    {
      ...UPLOAD_ROUTE,
      // `manual` is refused before anything else is looked at, whatever the rest of the body holds.
      preValidation: async (req) => {
        if ((req.body as { placement?: unknown } | undefined)?.placement === 'manual')
          throw apiError('placement_retired');
      },
      schema: {
        tags,
        summary: 'Create a document and one signing request per signer; invitations go out by e-mail.',
        body: CreateBody,
        response: { 201: Created, ...errorResponses(400, 404, 409, 413, 422, 503, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createSigningRequest(deps, authOf(req), req.body, clientMeta(req))),
  );

  app.get(
    '/signing-requests/:id',
    {
      schema: {
        tags,
        summary: 'A signing request’s current state (never the signer link).',
        params: IdParam,
        response: { 200: RequestOut, ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req) => getRequest(deps, authOf(req).workspace.id, req.params.id),
  );

  app.post(
    '/signing-requests/:id/remind',
    {
      schema: {
        tags,
        summary: 'Re-send the invitation e-mail (with a fresh link) to an open request’s signer.',
        params: IdParam,
        response: { 202: RequestOut, ...errorResponses(404, 409, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => reply.code(202).send(presentRequest(await remindRequest(deps, authOf(req), req.params.id))),
  );

  app.post(
    '/signing-requests/:id/withdraw',
    {
      schema: {
        tags,
        summary: 'Withdraw a signing request; its document then never completes (it becomes withdrawn).',
        params: IdParam,
        response: { 200: RequestOut, ...errorResponses(404, 409, ...AUTH_ERRORS) },
      },
    },
    async (req) => presentRequest(await withdrawRequest(deps, authOf(req), req.params.id)),
  );
}
