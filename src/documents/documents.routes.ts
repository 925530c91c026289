import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { apiError } from '../http/errors.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { listAudit, verifyChain } from './audit.repo.js';
import { findDocument, listRequests } from './documents.repo.js';
import { presentDocument } from '../signing/presenters.js';
import { RequestOut, CREATE_BODY_LIMIT } from '../signing/signing.routes.js';
import { decodeFile, withdrawDocument, type SigningDeps } from '../signing/signing.service.js';
import { auditPageInput } from '../signing/sealing.js';
import { MAX_SIGNERS } from '../signing/signing.service.js';

const DocumentOut = Type.Object({
  id: Type.String(),
  status: Type.String(),
  title: Type.String(),
  locale: Type.String(),
  signing_order: Type.String(),
  placement: Type.String(),
  file_name: Type.String(),
  page_count: Type.Integer(),
  sha256: Type.String({ description: 'SHA-256 of the original upload' }),
  signed_sha256: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  expires_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  signed_pdf_url: Type.Optional(Type.String()),
  audit_trail_url: Type.Optional(Type.String()),
  signing_requests: Type.Array(RequestOut),
});

const AuditEntryOut = Type.Object({
  seq: Type.Integer(),
  at: Type.String(),
  action: Type.String(),
  actor: Type.String(),
  signing_request_id: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  detail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  prev_hash: Type.String(),
  hash: Type.String(),
});

const PreviewBody = Type.Object(
  {
    file: Type.Optional(Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), content_base64: Type.String({ maxLength: CREATE_BODY_LIMIT }) }, { additionalProperties: false })),
    file_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: MAX_SIGNERS })),
  },
  { additionalProperties: false },
);

export async function documentsRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Documents'];

  const mustFind = async (workspaceId: string, id: string) => {
    const d = await findDocument(deps.db.kysely, workspaceId, id);
    if (!d) throw apiError('not_found');
    return d;
  };

  app.get(
    '/v1/documents/:id',
    { schema: { tags, summary: 'A document and its signing requests (never signer links).', params: IdParam, response: { 200: DocumentOut, ...errorResponses(404, ...AUTH_ERRORS) } } },
    async (req) => {
      const d = await mustFind(authOf(req).workspace.id, req.params.id);
      return presentDocument(d, await listRequests(deps.db.kysely, d.id), deps.config.baseUrl);
    },
  );

  app.post(
    '/v1/documents/:id/withdraw',
    { schema: { tags, summary: 'Withdraw a document: every open request closes and it never completes.', params: IdParam, response: { 200: DocumentOut, ...errorResponses(404, 409, ...AUTH_ERRORS) } } },
    async (req) => {
      const ws = authOf(req).workspace.id;
      await withdrawDocument(deps, authOf(req), req.params.id);
      const d = await mustFind(ws, req.params.id);
      return presentDocument(d, await listRequests(deps.db.kysely, d.id), deps.config.baseUrl);
    },
  );

  app.get(
    '/v1/documents/:id/signed',
    {
      schema: {
        tags,
        summary: 'The sealed PDF (application/pdf); 409 document_not_completed before completion.',
        params: IdParam,
        response: { 200: { description: 'application/pdf', type: 'string', format: 'binary' }, ...errorResponses(404, 409, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      const d = await mustFind(authOf(req).workspace.id, req.params.id);
      if (d.status !== 'completed' || !d.signed_blob) throw apiError('document_not_completed', { meta: { status: d.status } });
      const pdf = await deps.blobs.get(d.signed_blob);
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${d.id}-signed.pdf"`)
        .header('x-content-sha256', d.signed_sha256 ?? '')
        .send(Buffer.from(pdf) as never);
    },
  );

  app.get(
    '/v1/documents/:id/audit-trail',
    {
      schema: {
        tags,
        summary: 'Every event of the document in a SHA-256 hash chain; `Accept: application/pdf` gives the audit certificate.',
        params: IdParam,
        response: {
          200: Type.Object({
            document_id: Type.String(),
            status: Type.String(),
            original_sha256: Type.String(),
            signed_sha256: Type.Union([Type.String(), Type.Null()]),
            chain_valid: Type.Boolean(),
            head_hash: Type.String(),
            entries: Type.Array(AuditEntryOut),
          }),
          ...errorResponses(404, ...AUTH_ERRORS),
        },
      },
    },
    async (req, reply) => {
      const d = await mustFind(authOf(req).workspace.id, req.params.id);
      const entries = await listAudit(deps.db.kysely, d.id);
      const accept = String(req.headers.accept ?? '');
      if (/application\/pdf/i.test(accept) && !/application\/json/i.test(accept.split(',')[0] ?? '')) {
        const requests = await listRequests(deps.db.kysely, d.id);
        const pdf = await deps.pdf.auditCertificate(auditPageInput(d, requests, d.completed_at ?? deps.clock.now()), entries as unknown as Record<string, unknown>[]);
        return reply.type('application/pdf').header('content-disposition', `inline; filename="${d.id}-audit.pdf"`).send(Buffer.from(pdf) as never);
      }
      return {
        document_id: d.id,
        status: d.status,
        original_sha256: d.original_sha256,
        signed_sha256: d.signed_sha256,
        chain_valid: verifyChain(d.id, entries) === null,
        head_hash: entries.at(-1)?.hash ?? '',
        entries,
      };
    },
  );

  app.post(
    '/v1/placement/preview',
    {
      bodyLimit: CREATE_BODY_LIMIT,
      schema: {
        tags: ['Placement'],
        summary: 'Dry run: the anchors found in a PDF (page and box) and every problem, without creating anything.',
        body: PreviewBody,
        response: {
          200: Type.Object({ page_count: Type.Integer(), anchors: Type.Array(Type.Object({}, { additionalProperties: true })), problems: Type.Array(Type.Object({}, { additionalProperties: true })) }),
          ...errorResponses(400, 413, ...AUTH_ERRORS),
        },
      },
    },
    async (req) => {
      const b = req.body;
      if ((b.file === undefined) === (b.file_url === undefined)) {
        throw apiError('invalid_request', { message: 'Give exactly one of file or file_url.', meta: { field: 'file' } });
      }
      const bytes = b.file ? decodeFile(b.file) : await deps.files.fetch(b.file_url!);
      const info = await deps.pdf.inspect(bytes);
      const r = await deps.pdf.preview(bytes, b.roles);
      return { page_count: info.pageCount, anchors: r.anchors as Record<string, unknown>[], problems: r.problems };
    },
  );
}
