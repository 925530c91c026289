// Static files of the signer, review, embed and dashboard pages and the API reference: their scripts and stylesheets,
// Pico CSS, Redoc and pdf.js's browser build from the installed packages (no CDN, so a page makes no third-party
// request). Each file is read once, when first asked for; pages link them with a content-hash query, so they can be
// cached for a year without a stale script surviving a deploy.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type Asset = { body: Buffer; type: string; etag: string; version: string };

const here = path.dirname(fileURLToPath(import.meta.url));
const pdfjsRoot = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  // TypeScript declarations (signet.d.ts), for integrators to download.
  '.ts': 'text/plain; charset=utf-8',
  '.pfb': 'application/octet-stream',
  '.ttf': 'font/ttf',
  '.bcmap': 'application/octet-stream',
};

function load(file: string, patch?: (text: string) => string): Asset {
  const body = patch ? Buffer.from(patch(fs.readFileSync(file, 'utf8'))) : fs.readFileSync(file);
  const hash = createHash('sha256').update(body).digest('base64url');
  return {
    body,
    type: TYPES[path.extname(file)] ?? 'application/octet-stream',
    etag: `"${hash.slice(0, 27)}"`,
    version: hash.slice(0, 12),
  };
}

/**
 * Redoc's bundle draws one image from Redocly's CDN (the sidebar's "API docs by Redocly" logo); the API reference
 * must work offline and reach no other host, so it is served with an empty image instead (its error hides it).
 */
const REDOC_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';
function withoutRemoteLogo(text: string): string {
  if (text.split(REDOC_LOGO).length !== 2) throw new Error(`redoc bundle: expected ${REDOC_LOGO} exactly once`);
  return text.replace(REDOC_LOGO, '"data:,"');
}

const require = createRequire(import.meta.url);
const beside = (rel: string) => path.join(here, rel);

/** Each asset's file (and the change it is served with); read and hashed on first use, then kept. */
const FILES = {
  'signer.js': { file: beside('signer.js') },
  'signer.css': { file: beside('signer.css') },
  // The PDF preview both pages import (through its versioned URL, given in each page's data).
  'pdf-view.js': { file: beside('pdf-view.js') },
  // The review page of staged template instances (templates/review/) shares pdf.js and signer.css.
  'review.js': { file: beside('../../templates/review/review.js') },
  'review.css': { file: beside('../../templates/review/review.css') },
  // Embedded signing (embedded/): the bridge the framed page loads, and the helper host pages load.
  'embed-bridge.js': { file: beside('../../embedded/assets/bridge.js') },
  'signet.js': { file: beside('../../embedded/assets/signet.js') },
  'signet.d.ts': { file: beside('../../embedded/assets/signet.d.ts') },
  // The workspace dashboard (dashboard/): Pico CSS from its package, and the dashboard's own style and script.
  'pico.min.css': { file: require.resolve('@picocss/pico/css/pico.min.css') },
  'dashboard.css': { file: beside('../../dashboard/assets/dashboard.css') },
  'dashboard.js': { file: beside('../../dashboard/assets/dashboard.js') },
  'pdf.min.mjs': { file: path.join(pdfjsRoot, 'build/pdf.min.mjs') },
  'pdf.worker.min.mjs': { file: path.join(pdfjsRoot, 'build/pdf.worker.min.mjs') },
  // The API reference (docs/): Redoc's standalone bundle, and the page's own start-up script and style.
  'redoc.standalone.js': {
    file: require.resolve('redoc/bundles/redoc.standalone.js'),
    patch: withoutRemoteLogo,
  },
  'docs.js': { file: beside('../../docs/assets/docs.js') },
  'docs.css': { file: beside('../../docs/assets/docs.css') },
} satisfies Record<string, { file: string; patch?: (text: string) => string }>;

export type AssetName = keyof typeof FILES;

// Loading every asset when the module loads cost a start about 0.1 s of file reads and hashing (Redoc and pdf.js
// are megabytes; the cmaps are 170 files), for pages most processes never serve.
const loaded = new Map<string, Asset>();
function asset(name: string): Asset | undefined {
  let a = loaded.get(name);
  if (a === undefined && Object.hasOwn(FILES, name)) {
    const { file, patch } = FILES[name as AssetName] as { file: string; patch?: (text: string) => string };
    loaded.set(name, (a = load(file, patch)));
  }
  return a;
}

/** A file of a pdfjs-dist folder (fonts for non-embedded standard fonts, CJK cmaps), if it is one we serve. */
const listings = new Map<string, Set<string>>();
function pdfjsAsset(sub: 'standard_fonts' | 'cmaps', name: string): Asset | undefined {
  let names = listings.get(sub);
  if (!names) {
    const served = fs.readdirSync(path.join(pdfjsRoot, sub)).filter((n) => TYPES[path.extname(n)]);
    listings.set(sub, (names = new Set(served)));
  }
  if (!names.has(name)) return undefined;
  const key = `pdfjs/${sub}/${name}`;
  let a = loaded.get(key);
  if (a === undefined) loaded.set(key, (a = load(path.join(pdfjsRoot, sub, name))));
  return a;
}

/** Same-origin URL of an asset, versioned by content so a long cache never serves an old file. */
export const assetUrl = (name: AssetName): string => `/assets/${name}?v=${asset(name)!.version}`;

/** Folder URLs pdf.js fetches from on demand (its own files carry no version; they change only with the package). */
export const PDFJS_FONTS_URL = '/assets/pdfjs/standard_fonts/';
export const PDFJS_CMAPS_URL = '/assets/pdfjs/cmaps/';

const IMMUTABLE = {
  'cache-control': 'public, max-age=31536000, immutable',
  // pdf.js fetches fonts and cmaps from its worker; same origin, but say so for strict embedders.
  'cross-origin-resource-policy': 'same-origin',
};

function send(
  asset: Asset | undefined,
  ifNoneMatch: string | undefined,
  reply: FastifyReply,
  headers: Record<string, string> = IMMUTABLE,
) {
  if (!asset) return reply.callNotFound();
  reply.headers({ 'content-type': asset.type, etag: asset.etag, 'x-content-type-options': 'nosniff', ...headers });
  if (ifNoneMatch === asset.etag) return reply.code(304).send();
  return reply.send(asset.body);
}

/**
 * An asset at an address of its own without a content version (signet.js, which host pages load by a fixed URL):
 * cached for `maxAgeSeconds`, then revalidated by ETag; loadable by any site.
 */
export const sendUnversionedAsset = (
  name: AssetName,
  req: FastifyRequest,
  reply: FastifyReply,
  maxAgeSeconds: number,
) =>
  send(asset(name), req.headers['if-none-match'], reply, {
    'cache-control': `public, max-age=${maxAgeSeconds}, must-revalidate`,
    'cross-origin-resource-policy': 'cross-origin',
    'access-control-allow-origin': '*',
  });

export async function signerAssetRoutes(app: FastifyInstance): Promise<void> {
  const opts = { schema: { hide: true } };
  app.get<{ Params: { name: string } }>('/assets/:name', opts, async (req, reply) =>
    send(asset(req.params.name), req.headers['if-none-match'], reply),
  );
  app.get<{ Params: { name: string } }>('/assets/pdfjs/standard_fonts/:name', opts, async (req, reply) =>
    send(pdfjsAsset('standard_fonts', req.params.name), req.headers['if-none-match'], reply),
  );
  app.get<{ Params: { name: string } }>('/assets/pdfjs/cmaps/:name', opts, async (req, reply) =>
    send(pdfjsAsset('cmaps', req.params.name), req.headers['if-none-match'], reply),
  );
}
