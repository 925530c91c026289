// GET /docs: the API reference (Redoc over GET /v1/openapi.json). No key needed; registered with the key-less pages,
// so the per-address limit applies. Its scripts and style are served by the shared /assets route. Wiring only.
import type { FastifyInstance } from 'fastify';
import { DOCS_HEADERS, renderDocsPage } from './docs-page.js';

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  // Rendered on first request: its asset versions mean reading Redoc's bundle, which most processes never serve.
  let page: string | undefined;
  app.get('/docs', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .headers(DOCS_HEADERS)
      .type('text/html; charset=utf-8')
      .send((page ??= renderDocsPage(app.assets))),
  );
}
