// GET /docs: the API reference (Redoc over GET /v1/openapi.json). No key needed; registered with the key-less pages,
// so the per-address limit applies. Its scripts and style are served by the shared /assets route. Wiring only.
import type { FastifyInstance } from 'fastify';
import { pageHeaders } from '../signing/page/signer-page.js';
import { DOCS_CSP, renderDocsPage } from './docs-page.js';

// The signer pages' headers (never framed, no referrer), with a CSP of the page's own.
const HEADERS = { ...pageHeaders(), 'content-security-policy': DOCS_CSP };
const PAGE = renderDocsPage();

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/docs', { schema: { hide: true } }, async (_req, reply) =>
    reply.headers(HEADERS).type('text/html; charset=utf-8').send(PAGE),
  );
}
