// /v1/documents/*: a document with its requests, withdraw, the sealed PDF, the audit trail; and the placement dry
// run. Wiring only.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listAudit, verifyChain } from '../documents/audit.repo.js';
import { apiError } from '../lib/errors.js';
import { FILE_BODY_LIMIT } from '../limits.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { fileOf } from './create.js';
import { auditCertificateEvents, auditPageInput, presentDocument } from './presenters.js';
import { AuditTrailOut, DocumentOut, PreviewBody, PreviewOut } from './signing.schemas.js';
import { findDocument, listRequests } from './signing.repo.js';
import { withdrawDocument, type SigningDeps } from './signing.service.js';

export async function documentsRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Documents'];

  const mustFind = async (workspaceId: string, id: string) => {
    const d = await findDocument(deps.db.kysely, workspaceId, id);
    if (!d) throw apiError('not_found');
    return d;
  };
  const present = async (workspaceId: string, id: string) => {
    const d = await mustFind(workspaceId, id);
    return presentDocument(d, await listRequests(deps.db.kysely, d.id), deps.config.baseUrl);
  };

  app.get(
    '/documents/:id',
    { schema: { tags, summary: 'A document and its signing requests (never signer links).', params: IdParam, response: { 200: DocumentOut, ...errorResponses(404, ...AUTH_ERRORS) } } },
    async (req) => present(authOf(req).workspace.id, req.params.id),
  );

  app.post(
    '/documents/:id/withdraw',
    { schema: { tags, summary: 'Withdraw a document: every open request closes and it never completes.', params: IdParam, response: { 200: DocumentOut, ...errorResponses(404, 409, ...AUTH_ERRORS) } } },
    async (req) => {
      await withdrawDocument(deps, authOf(req), req.params.id);
      return present(authOf(req).workspace.id, req.params.id);
    },
  );

  app.get(
    '/documents/:id/signed',
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
    '/documents/:id/audit-trail',
    {
      schema: {
        tags,
        summary: 'Every event of the document in a SHA-256 hash chain; `Accept: application/pdf` gives the audit certificate.',
        params: IdParam,
        response: { 200: AuditTrailOut, ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req, reply) => {
      const d = await mustFind(authOf(req).workspace.id, req.params.id);
      const entries = await listAudit(deps.db.kysely, d.id);
      const accept = String(req.headers.accept ?? '');
      if (/application\/pdf/i.test(accept) && !/application\/json/i.test(accept.split(',')[0] ?? '')) {
        const requests = await listRequests(deps.db.kysely, d.id);
        const pdf = await deps.pdf.auditCertificate(auditPageInput(d, requests, d.completed_at ?? deps.clock.now()), auditCertificateEvents(entries));
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
    '/placement/preview',
    {
      bodyLimit: FILE_BODY_LIMIT,
      schema: {
        tags: ['Placement'],
        summary: 'Dry run: the anchors found in a PDF (page and box) and every problem, without creating anything.',
        body: PreviewBody,
        response: { 200: PreviewOut, ...errorResponses(400, 413, ...AUTH_ERRORS) },
      },
    },
    async (req) => {
      const bytes = await fileOf(deps, req.body);
      const info = await deps.pdf.inspect(bytes);
      const r = await deps.pdf.preview(bytes, req.body.roles);
      return { page_count: info.pageCount, anchors: r.anchors, problems: r.problems };
    },
  );
}
