// POST /v1/verifications: a PDF as the body (application/pdf), its verification report back. Wiring only.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { AUTH_ERRORS, errorResponses } from '../http/schemas.js';
import { sha256Hex } from '../lib/crypto.js';
import { VerificationResponse } from './verification.schemas.js';
import { pdfBody, verifyFile, type VerificationDeps } from './verification.service.js';

export async function verificationRoutes(fastify: FastifyInstance, deps: VerificationDeps): Promise<void> {
  // Only in this plugin: the raw PDF body. Its hash stands in for the body in the idempotency fingerprint.
  fastify.addContentTypeParser('application/pdf', { parseAs: 'buffer' }, (req, body, done) => {
    req.rawBody = sha256Hex(body as Buffer);
    done(null, body);
  });
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/verifications',
    {
      ...UPLOAD_ROUTE,
      schema: {
        tags: ['Verification'],
        summary: 'Verify a signed PDF (the body, application/pdf): signatures, timestamps, PAdES level, changes.',
        description:
          'Signet addition. The file is checked in memory and never stored. A Signet document this instance sealed ' +
          'is named in `document`, whichever copy is sent (renewed ones included). Not a PDF, encrypted or ' +
          'unreadable: 400 `invalid_file`; over the body limit: 413 `payload_too_large`.',
        response: { 200: VerificationResponse, ...errorResponses(400, 413, ...AUTH_ERRORS) },
      },
    },
    async (req) => ({ verification: await verifyFile(deps, pdfBody(req.body)) }),
  );
}
