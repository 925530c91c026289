// GET /docs: the API reference (Redoc over GET /v1/openapi.json). No key needed; registered with the key-less pages,
// so the per-address limit applies. Its scripts and style are served by the shared /assets route. Wiring only.
import type { FastifyInstance } from 'fastify';
import { DOCS_HEADERS, renderDocsPage } from './docs-page.js';

const PAGE = renderDocsPage();

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/docs', { schema: { hide: true } }, async (_req, reply) =>
    reply.headers(DOCS_HEADERS).type('text/html; charset=utf-8').send(PAGE),
  );
}
