// /v1/templates/{id}/bulk-sends and /v1/bulk-sends/{id}. Wiring only: the rules are in bulk-sends.service.ts.
// Every route here answers 503 review_unavailable while the database predates bulk sends (feature-gate.ts).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { migrationGate, registerFeatureGate } from '../http/feature-gate.js';
import { authOf, clientMeta } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { sha256Hex } from '../lib/crypto.js';
import { BULK_BODY_LIMIT } from '../limits.js';
import {
  BulkSendBody,
  BulkSendCreated,
  BulkSendCsv,
  BulkSendDetail,
  BulkSendQuery,
  DryRunOut,
} from './bulk-sends.schemas.js';
import { decodeCsv } from './bulk-sends.csv.js';
import { createBulkSend, dryRunBulkSend, getBulkSend, type BulkUpload } from './bulk-sends.service.js';
import type { TemplatesDeps } from './templates.service.js';

const UNMIGRATED =
  'Bulk sends are unavailable until this deployment’s database is migrated (signet migrate); retry later.';

export async function bulkSendsRoutes(fastify: FastifyInstance, deps: TemplatesDeps): Promise<void> {
  registerFeatureGate(fastify, migrationGate(deps.db, '014-bulk-sends'), 'review_unavailable', {
    message: UNMIGRATED,
  });
  // Only in this plugin: a CSV body, read as strict UTF-8 (a BOM dropped). Its hash stands in for the body in the
  // idempotency fingerprint.
  fastify.addContentTypeParser(/^text\/csv(\s*;.*)?$/i, { parseAs: 'buffer' }, (req, body, done) => {
    if (req.headers['idempotency-key'] !== undefined) req.rawBody = sha256Hex(body as Buffer);
    try {
      done(null, decodeCsv(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Bulk sends'];

  // Two bodies by content type: the schema's `content` form, which the typed provider does not model.
  fastify.post(
    '/templates/:id/bulk-sends',
    {
      // Counted in the upload byte budget, with the upload timeout, like the routes that take a file.
      ...UPLOAD_ROUTE,
      bodyLimit: BULK_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Send a template to many: one instance per CSV or JSON row, sent by a job; ?dry_run=true checks only.',
        description:
          'Signet addition. Each row is an instantiate body (recipients, field_values, …) and is checked with ' +
          'instantiate’s rules when sent; a row that fails is reported in GET /v1/bulk-sends/{id} and the others ' +
          'are sent. Each instance counts against the monthly document cap: a send that would pass it stops, the ' +
          'rows left reported failed. `?dry_run=true` answers 200 with every failing row and creates nothing. ' +
          'Retrying with the same Idempotency-Key replays the 202; without one, a retried upload is a new send.',
        params: IdParam,
        querystring: BulkSendQuery,
        body: { content: { 'application/json': { schema: BulkSendBody }, 'text/csv': { schema: BulkSendCsv } } },
        response: {
          200: DryRunOut,
          202: BulkSendCreated,
          ...errorResponses(400, 404, 413, 422, 503, ...AUTH_ERRORS),
        },
      },
    },
    async (req, reply) => {
      const query = req.query as { dry_run?: string; version?: string };
      const upload: BulkUpload =
        typeof req.body === 'string'
          ? { csv: req.body, version: query.version === undefined ? undefined : Number(query.version) }
          : { json: req.body as BulkSendBody };
      const auth = authOf(req);
      const id = (req.params as { id: string }).id;
      if (query.dry_run === 'true') return reply.code(200).send(await dryRunBulkSend(deps, auth, id, upload));
      return reply.code(202).send(await createBulkSend(deps, auth, id, upload, clientMeta(req)));
    },
  );

  app.get(
    '/bulk-sends/:id',
    {
      schema: {
        tags,
        summary: 'A bulk send’s progress and each row’s outcome (instance id, or problems).',
        params: IdParam,
        response: { 200: BulkSendDetail, ...errorResponses(404, 503, ...AUTH_ERRORS) },
      },
    },
    async (req) => getBulkSend(deps, authOf(req), req.params.id),
  );
}
