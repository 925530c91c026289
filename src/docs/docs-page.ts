// The API reference page: a shell that loads Redoc and its start-up script from our own /assets (versioned URLs,
// cached for a year) and points it at the OpenAPI document. Without JavaScript it links the document itself.
import type { Assets } from '../web/assets.js';
import { pageHeaders } from '../web/headers.js';
import { deferredScript, htmlHead } from '../web/html.js';

export const OPENAPI_URL = '/v1/openapi.json';

/**
 * Never framed, no referrer. Redoc needs inline styles (styled-components writes its rules into <style> elements at
 * run time) and a worker from a blob: URL (its search index). Scripts are ours only; the one image it would fetch
 * from Redocly's CDN is removed from the bundle we serve (docs.assets.ts), and img-src would refuse it anyway.
 */
export const DOCS_HEADERS = pageHeaders({
  csp: {
    scripts: ['self'],
    styles: ['self', 'unsafe-inline'],
    images: ['self', 'data:'],
    fonts: ['self'],
    connect: ['self'],
    workers: ['blob:'],
    objects: ['none'],
    baseUri: ['none'],
    formActions: ['none'],
    frameAncestors: ['none'],
  },
});

export function renderDocsPage(assets: Assets): string {
  const head = htmlHead({
    locale: 'en',
    title: 'Signet API reference',
    stylesheets: [assets.url('docs.css')],
    tags: [deferredScript(assets.url('redoc.standalone.js')), deferredScript(assets.url('docs.js'))],
  });
  return `${head}
<body>
<main id="redoc" data-spec-url="${OPENAPI_URL}">
<p class="docs-loading">Loading the API reference… It needs JavaScript; the OpenAPI document itself is at <a href="${OPENAPI_URL}">${OPENAPI_URL}</a>.</p>
</main>
</body>
</html>
`;
}
