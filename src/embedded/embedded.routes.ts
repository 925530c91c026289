// POST /v1/embedded/sign-sessions. Wiring only: the rules are in sessions.service.ts. The order of refusals is the
// contract's: 503 embedding_unavailable (schema predates sessions) and 402 enterprise-required run before the body
// is parsed (onRequest hooks), then the schema (400 invalid_request), then the service.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { migrationApplied } from '../db/migrate.js';
import { createFeatureGate, registerFeatureGate } from '../http/feature-gate.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, errorResponses } from '../http/schemas.js';
import type { SigningDeps } from '../signing/signing.service.js';
import { requireFeature } from '../workspaces/features.js';
import { SessionBody, SessionOut } from './embedded.schemas.js';
import { mintSession } from './sessions.service.js';

const UNMIGRATED =
  'Embedded signing is unavailable until this deployment’s database is migrated (signet migrate); retry later.';

export async function embeddedRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  registerFeatureGate(
    fastify,
    createFeatureGate(() => migrationApplied(deps.db, '006-embedded-sessions')),
    'embedding_unavailable',
    { message: UNMIGRATED },
  );

  app.post(
    '/embedded/sign-sessions',
    {
      // onRequest, after the /v1 gate: the plan is refused before the body is even parsed.
      onRequest: async (req) => requireFeature(authOf(req).workspace, 'embedded_sessions'),
      schema: {
        tags: ['Embedded signing'],
        summary: 'Mint a short-lived session that frames the signing page on one registered origin.',
        description:
          'The `url` opens the signing page for `ttl_seconds` (60 to 900) inside an iframe on `origin` only. Minting ' +
          'changes nothing about the signing request and leaves its e-mail link valid.',
        body: SessionBody,
        response: { 201: SessionOut, ...errorResponses(400, 404, 409, 503, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => reply.code(201).send(await mintSession(deps, authOf(req), req.body)),
  );
}
