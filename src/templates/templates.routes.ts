// /v1/templates and /v1/template-instances. Wiring only: the rules are in templates.service.ts and instances.ts.
// Every route here answers 503 review_unavailable while the database predates the feature (feature-gate.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { migrationApplied } from '../db/migrate.js';
import { createFeatureGate, registerFeatureGate } from '../http/feature-gate.js';
import { authOf, clientMeta } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { generate, getInstance, instantiate } from './instances.js';
import { confirmInstance, discardInstance } from './staging.js';
import { ConfirmBody, GenerateBody, InstanceCreated, InstanceOut, InstantiateBody } from './instances.schemas.js';
import {
  CreateTemplateBody,
  TemplateList,
  TemplateOut,
  VersionBody,
  VersionOut,
  VersionParams,
} from './templates.schemas.js';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  getVersion,
  listWorkspaceTemplates,
  publishVersion,
  type TemplatesDeps,
} from './templates.service.js';

const UNMIGRATED =
  'Templates are unavailable until this deployment’s database is migrated (signet migrate); retry later.';

export async function templatesRoutes(fastify: FastifyInstance, deps: TemplatesDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  registerFeatureGate(
    fastify,
    createFeatureGate(() => migrationApplied(deps.db, '005-templates')),
    'review_unavailable',
    {
      message: UNMIGRATED,
    },
  );
  const tags = ['Templates'];
  const itags = ['Template instances'];
  const unavailable = errorResponses(503);

  app.post(
    '/templates',
    {
      ...UPLOAD_ROUTE,
      schema: {
        tags,
        summary: 'Create a template (version 1): a PDF, recipient slots and fields placed by anchor or box.',
        body: CreateTemplateBody,
        response: { 201: TemplateOut, ...errorResponses(400, 413, 422, 503, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => reply.code(201).send(await createTemplate(deps, authOf(req), req.body)),
  );

  app.get(
    '/templates',
    {
      schema: {
        tags,
        summary: 'The workspace’s templates, newest first (archived ones with ?archived=true).',
        // Query strings arrive as text and the validator never coerces: the forms are spelled out and converted here.
        querystring: Type.Object(
          {
            archived: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
            limit: Type.Optional(Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1 to 100' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: TemplateList, ...unavailable, ...errorResponses(400, ...AUTH_ERRORS) },
      },
    },
    async (req) => ({
      data: await listWorkspaceTemplates(deps, authOf(req).workspace.id, {
        archived: req.query.archived === 'true',
        limit: req.query.limit === undefined ? undefined : Number(req.query.limit),
      }),
    }),
  );

  app.get(
    '/templates/:id',
    {
      schema: {
        tags,
        summary: 'A template with its current version’s slots and fields.',
        params: IdParam,
        response: { 200: TemplateOut, ...errorResponses(404, 503, ...AUTH_ERRORS) },
      },
    },
    async (req) => getTemplate(deps, authOf(req), req.params.id),
  );

  app.delete(
    '/templates/:id',
    {
      schema: {
        tags,
        summary: 'Archive a template: it can no longer be used; its instances keep working.',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(404, 503, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      await deleteTemplate(deps, authOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/templates/:id/versions',
    {
      ...UPLOAD_ROUTE,
      schema: {
        tags,
        summary: 'Publish version n+1: an immutable snapshot (no file = keep the current PDF).',
        params: IdParam,
        body: VersionBody,
        response: { 201: TemplateOut, ...errorResponses(400, 404, 413, 422, 503, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => reply.code(201).send(await publishVersion(deps, authOf(req), req.params.id, req.body)),
  );

  app.get(
    '/templates/:id/versions/:n',
    {
      schema: {
        tags,
        summary: 'One version’s snapshot: file, slots and placed fields.',
        params: VersionParams,
        response: { 200: VersionOut, ...errorResponses(404, 503, ...AUTH_ERRORS) },
      },
    },
    async (req) => getVersion(deps, authOf(req), req.params.id, Number(req.params.n)),
  );

  app.post(
    '/templates/:id/instantiate',
    {
      schema: {
        tags: itags,
        summary: 'A document for recipients from a template: sent at once, or staged for review with review: true.',
        params: IdParam,
        body: InstantiateBody,
        response: { 201: InstanceCreated, ...errorResponses(400, 404, 409, 422, 502, 503, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await instantiate(deps, authOf(req), req.params.id, req.body, clientMeta(req))),
  );

  app.post(
    '/templates/:id/generate',
    {
      schema: {
        tags: itags,
        summary: 'A finished, sealed PDF from a template and the sender’s values (no signers).',
        params: IdParam,
        body: GenerateBody,
        response: { 201: InstanceCreated, ...errorResponses(400, 404, 409, 422, 502, 503, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await generate(deps, authOf(req), req.params.id, req.body, clientMeta(req))),
  );

  app.get(
    '/template-instances/:id',
    {
      schema: {
        tags: itags,
        summary: 'A template instance’s state.',
        params: IdParam,
        response: { 200: InstanceOut, ...errorResponses(404, 503, ...AUTH_ERRORS) },
      },
    },
    async (req) => getInstance(deps, authOf(req), req.params.id),
  );

  app.post(
    '/template-instances/:id/confirm',
    {
      schema: {
        tags: itags,
        summary: 'Confirm a staged instance: invitations go out (or the file is sealed).',
        params: IdParam,
        body: Type.Optional(ConfirmBody),
        response: { 200: InstanceOut, ...errorResponses(400, 402, 404, 409, 410, 422, 502, 503, ...AUTH_ERRORS) },
      },
    },
    async (req) => confirmInstance(deps, { auth: authOf(req) }, req.params.id, req.body?.recipients),
  );

  app.post(
    '/template-instances/:id/discard',
    {
      schema: {
        tags: itags,
        summary: 'Discard a staged instance; nothing is sent.',
        params: IdParam,
        response: { 200: InstanceOut, ...errorResponses(404, 409, 410, 503, ...AUTH_ERRORS) },
      },
    },
    async (req) => discardInstance(deps, { auth: authOf(req) }, req.params.id),
  );
}
