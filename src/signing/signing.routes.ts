import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { apiError } from '../http/errors.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { normaliseAddress } from '../lib/ip.js';
import { findRequest } from '../documents/documents.repo.js';
import { presentRequest } from './presenters.js';
import { createSigningRequest, remindRequest, withdrawRequest, type ClientMeta, type SigningDeps, MAX_SIGNERS } from './signing.service.js';

/** 25 MB of PDF in base64 plus the rest of the body; larger files get 413 (file_too_large or payload_too_large). */
export const CREATE_BODY_LIMIT = 40 * 1024 * 1024;

export const clientMeta = (req: FastifyRequest): ClientMeta => ({
  ip: normaliseAddress(req.socket.remoteAddress),
  userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'].slice(0, 512) : null,
});

const Role = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
const SignerIn = Type.Object(
  { role: Role, email: Type.String({ minLength: 3, maxLength: 254 }), name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
const FieldIn = Type.Object(
  {
    role: Role,
    type: Type.Union([Type.Literal('signature'), Type.Literal('initials'), Type.Literal('date'), Type.Literal('text')]),
    page: Type.Integer({ minimum: 1, maximum: 100000 }),
    x: Type.Number({ description: 'points from the page’s left edge' }),
    y: Type.Number({ description: 'points from the page’s top edge' }),
    width: Type.Number(),
    height: Type.Number(),
  },
  { additionalProperties: false },
);
export const CreateBody = Type.Object(
  {
    signers: Type.Array(SignerIn, { minItems: 1, maxItems: MAX_SIGNERS }),
    file: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), content_base64: Type.String({ maxLength: CREATE_BODY_LIMIT }) }, { additionalProperties: false }),
    ),
    file_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    placement: Type.Union([Type.Literal('anchors'), Type.Literal('auto_append'), Type.Literal('coordinates'), Type.Literal('manual')], {
      description: '`manual` was retired on 2026-07-31 and answers 400 placement_retired.',
    }),
    fields: Type.Optional(Type.Array(FieldIn, { minItems: 1, maxItems: 500, description: 'placement "coordinates" only' })),
    signing_order: Type.Optional(Type.Union([Type.Literal('parallel'), Type.Literal('sequential')])),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    locale: Type.Optional(Type.String({ minLength: 1, maxLength: 35 })),
    expires_at: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
);

const SignerOut = Type.Object({ email: Type.String(), role: Type.String(), name: Type.String(), slot: Type.Integer() });
const RequestBrief = Type.Object({ id: Type.String(), status: Type.String(), signer: SignerOut, expires_at: Type.String() });
const Nullable = (t: ReturnType<typeof Type.String>) => Type.Union([t, Type.Null()]);
export const RequestOut = Type.Object({
  id: Type.String(),
  document_id: Type.String(),
  status: Type.String(),
  signer: SignerOut,
  expires_at: Type.String(),
  sent_at: Nullable(Type.String()),
  viewed_at: Nullable(Type.String()),
  signed_at: Nullable(Type.String()),
  declined_at: Nullable(Type.String()),
  decline_reason: Nullable(Type.String()),
});
const Created = Type.Object({
  document_id: Type.String(),
  status: Type.String(),
  signing_order: Type.String(),
  expires_at: Type.String(),
  signing_requests: Type.Array(RequestBrief),
  callback: Type.Optional(Type.Object({ hook_id: Type.String(), secret: Type.String() })),
});

export async function signingRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Signing requests'];

  app.post(
    '/v1/signing-requests',
    {
      bodyLimit: CREATE_BODY_LIMIT,
      // `manual` is refused before anything else is looked at, whatever the rest of the body holds.
      preValidation: async (req) => {
        if ((req.body as { placement?: unknown } | undefined)?.placement === 'manual') throw apiError('placement_retired');
      },
      schema: {
        tags,
        summary: 'Create a document and one signing request per signer; invitations go out by e-mail.',
        body: CreateBody,
        response: { 201: Created, ...errorResponses(400, 404, 409, 413, 422, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => reply.code(201).send(await createSigningRequest(deps, authOf(req), req.body, clientMeta(req))),
  );

  app.get(
    '/v1/signing-requests/:id',
    { schema: { tags, summary: 'A signing request’s current state (never the signer link).', params: IdParam, response: { 200: RequestOut, ...errorResponses(404, ...AUTH_ERRORS) } } },
    async (req) => {
      const r = await findRequest(deps.db.kysely, authOf(req).workspace.id, req.params.id);
      if (!r) throw apiError('not_found');
      return presentRequest(r);
    },
  );

  app.post(
    '/v1/signing-requests/:id/remind',
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
    '/v1/signing-requests/:id/withdraw',
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
