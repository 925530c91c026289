// /v1/documents/*: a document with its requests, withdraw, the sealed PDF, the audit trail; and the placement dry
// run. Wiring only.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { authOf } from '../http/request-context.js';
import { AUTH_ERRORS, IdParam, errorResponses } from '../http/schemas.js';
import { auditCertificate, auditTrail, getDocument, previewPlacement, signedPdf } from './documents.service.js';
import { AuditTrailOut, DocumentOut, PreviewBody, PreviewOut } from './signing.schemas.js';
import { withdrawDocument } from './sender.service.js';
import { purgeDocument } from './purge.js';
import { PurgedOut } from './purge.schemas.js';
import { keyActor } from './presenters.js';
import type { SigningDeps } from './signing.service.js';

/** A PDF answer; its example is the start of a file. */
const Pdf = { schema: { type: 'string', format: 'binary' }, example: '%PDF-1.7 …' };

/** `Accept: application/pdf` (unless JSON comes first) asks for the audit certificate. */
const wantsPdf = (accept: string) =>
  /application\/pdf/i.test(accept) && !/application\/json/i.test(accept.split(',')[0] ?? '');

export async function documentsRoutes(fastify: FastifyInstance, deps: SigningDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Documents'];

  app.get(
    '/documents/:id',
    {
      schema: {
        tags,
        summary: 'A document and its signing requests (never signer links).',
        params: IdParam,
        response: { 200: DocumentOut, ...errorResponses(404, ...AUTH_ERRORS) },
      },
    },
    async (req) => getDocument(deps, authOf(req).workspace.id, req.params.id),
  );

  app.post(
    '/documents/:id/withdraw',
    {
      schema: {
        tags,
        summary: 'Withdraw a document: every open request closes and it never completes.',
        params: IdParam,
        response: { 200: DocumentOut, ...errorResponses(404, 409, ...AUTH_ERRORS) },
      },
    },
    async (req) => {
      await withdrawDocument(deps, authOf(req), req.params.id);
      return getDocument(deps, authOf(req).workspace.id, req.params.id);
    },
  );

  app.delete(
    '/documents/:id',
    {
      schema: {
        tags,
        summary:
          'Purge an ended document: its files, signers’ data, events and audit chain are deleted; a tombstone with ' +
          'its hashes stays, so its sealed PDF still verifies as ours. Repeating it answers the same; 409 ' +
          'document_not_ended while it is in progress.',
        params: IdParam,
        response: { 200: PurgedOut, ...errorResponses(404, 409, ...AUTH_ERRORS) },
      },
    },
    async (req) =>
      purgeDocument(deps, { workspaceId: authOf(req).workspace.id, id: req.params.id, actor: keyActor(authOf(req)) }),
  );

  app.get(
    '/documents/:id/signed',
    {
      schema: {
        tags,
        summary: 'The sealed PDF (application/pdf); 409 document_not_completed before completion.',
        params: IdParam,
        response: {
          200: { description: 'The sealed PDF.', content: { 'application/pdf': Pdf } },
          ...errorResponses(404, 409, ...AUTH_ERRORS),
        },
      },
    },
    async (req, reply) => {
      const d = await signedPdf(deps, authOf(req).workspace.id, req.params.id);
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${d.id}-signed.pdf"`)
        .header('x-content-sha256', d.sha256 ?? '')
        .send(Buffer.from(d.pdf) as never);
    },
  );

  app.get(
    '/documents/:id/audit-trail',
    {
      schema: {
        tags,
        summary:
          'Every event of the document in a SHA-256 hash chain; `Accept: application/pdf` gives the audit certificate.',
        params: IdParam,
        response: {
          200: {
            description: 'The hash chain as JSON, or with `Accept: application/pdf` the audit certificate.',
            content: {
              'application/json': { schema: AuditTrailOut },
              'application/pdf': Pdf,
            },
          },
          ...errorResponses(404, ...AUTH_ERRORS),
        },
      },
    },
    async (req, reply) => {
      const workspaceId = authOf(req).workspace.id;
      if (!wantsPdf(String(req.headers.accept ?? ''))) return auditTrail(deps, workspaceId, req.params.id);
      const c = await auditCertificate(deps, workspaceId, req.params.id);
      return reply
        .type('application/pdf')
        .header('content-disposition', `inline; filename="${c.id}-audit.pdf"`)
        .send(Buffer.from(c.pdf) as never);
    },
  );

  app.post(
    '/placement/preview',
    {
      ...UPLOAD_ROUTE,
      schema: {
        tags: ['Placement'],
        summary: 'Dry run: the anchors found in a PDF (page and box) and every problem, without creating anything.',
        body: PreviewBody,
        response: { 200: PreviewOut, ...errorResponses(400, 413, ...AUTH_ERRORS) },
      },
    },
    async (req) => previewPlacement(deps, req.body),
  );
}
