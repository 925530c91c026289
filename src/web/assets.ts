// Static files of the pages under /assets: each feature names its own in a table (scripts, styles, the vendor
// builds it uses), app.ts composes the tables, and this module serves them. Guarantees: a file is read and hashed
// on first use only, then kept; pages link it with a content-hash query, so it is cached for a year (immutable)
// without a stale file surviving a deploy; a page can only link a name some table has (AssetNames, filled in by
// app.ts, makes any other name a compile error), and two tables cannot claim one name (composing throws).
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** One file, optionally changed before it is served (the change is part of its hash). */
export type AssetFile = { file: string; patch?: (text: string) => string };
/** A folder a library fetches from on demand (no version: it changes only with its package); see `url`. */
export type AssetFolder = { folder: string };
/** Asset names: a file's (`signer.js`), or a folder's ending in `/` (`pdfjs/cmaps/`). */
export type AssetTable = Readonly<Record<string, AssetFile | AssetFolder>>;

/** Every composed asset name, declared by app.ts (declaration merging), so a page cannot link a name no table has. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AssetNames {}
export type AssetName = keyof AssetNames & string;

/** The names of a union of tables, for app.ts's declaration of AssetNames. */
export type NamesOf<T extends AssetTable> = Record<T extends unknown ? keyof T : never, true>;

/** The path of a file next to the module at `moduleUrl` (import.meta.url): holds in src/ and in dist/. */
export const besideModule = (moduleUrl: string, rel: string): string =>
  path.join(path.dirname(fileURLToPath(moduleUrl)), rel);

/** The path of a file of an installed package, resolved from the module at `moduleUrl`. */
export const packageFile = (moduleUrl: string, pkg: string, rel: string): string =>
  path.join(path.dirname(createRequire(moduleUrl).resolve(`${pkg}/package.json`)), rel);

type Asset = { body: Buffer; type: string; etag: string; version: string };

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

// Loading every asset up front cost a start about 0.1 s of reads and hashing (Redoc and pdf.js are megabytes; the
// cmaps are 170 files), for pages most processes never serve. Kept per process: apps in one process share files.
const loaded = new Map<string, Asset>();
function loadOnce(key: string, file: string, patch?: (text: string) => string): Asset {
  let a = loaded.get(key);
  if (a === undefined) loaded.set(key, (a = load(file, patch)));
  return a;
}

/** The files of a folder that we serve (known types only), listed once. */
const listings = new Map<string, Set<string>>();
function folderHas(folder: string, name: string): boolean {
  let names = listings.get(folder);
  if (!names) listings.set(folder, (names = new Set(fs.readdirSync(folder).filter((n) => TYPES[path.extname(n)]))));
  return names.has(name);
}

const IMMUTABLE = {
  'cache-control': 'public, max-age=31536000, immutable',
  // pdf.js fetches fonts and cmaps from its worker; same origin, but say so for strict embedders.
  'cross-origin-resource-policy': 'same-origin',
};

function send(
  asset: Asset | undefined,
  req: FastifyRequest,
  reply: FastifyReply,
  headers: Record<string, string> = IMMUTABLE,
): FastifyReply {
  if (!asset) {
    reply.callNotFound();
    return reply;
  }
  reply.headers({ 'content-type': asset.type, etag: asset.etag, 'x-content-type-options': 'nosniff', ...headers });
  if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.send(asset.body);
}

export type Assets = {
  /** Same-origin URL of a file, versioned by content; of a folder, its unversioned prefix. */
  url(name: AssetName): string;
  /**
   * A file at an address of its own without a content version (a helper host pages load by a fixed URL): cached
   * for `maxAgeSeconds`, then revalidated by ETag; loadable by any site.
   */
  sendUnversioned(name: AssetName, req: FastifyRequest, reply: FastifyReply, maxAgeSeconds: number): FastifyReply;
  /** Every name, for tests. */
  readonly names: readonly string[];
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's composed asset tables (registerAssets). */
    assets: Assets;
  }
}

/**
 * Composes the features' tables into the app's (`app.assets`; a name claimed twice is a programming error) and
 * serves it: /assets/<file>, and /assets/<folder>/<file> for each folder.
 */
export function registerAssets(app: FastifyInstance, tables: readonly AssetTable[]): Assets {
  const all = new Map<string, AssetFile | AssetFolder>();
  for (const table of tables)
    for (const [name, source] of Object.entries(table)) {
      if (all.has(name)) throw new Error(`asset "${name}" is named by two tables`);
      all.set(name, source);
    }
  const file = (name: string): Asset | undefined => {
    const s = all.get(name);
    return s && 'file' in s ? loadOnce(`${name}\n${s.file}`, s.file, s.patch) : undefined;
  };
  const assets: Assets = {
    url(name) {
      const s = all.get(name);
      if (!s) throw new Error(`unknown asset "${name}"`);
      return 'folder' in s ? `/assets/${name}` : `/assets/${name}?v=${file(name)!.version}`;
    },
    sendUnversioned: (name, req, reply, maxAgeSeconds) =>
      send(file(name), req, reply, {
        'cache-control': `public, max-age=${maxAgeSeconds}, must-revalidate`,
        'cross-origin-resource-policy': 'cross-origin',
        'access-control-allow-origin': '*',
      }),
    names: [...all.keys()],
  };
  app.decorate('assets', assets);

  const opts = { schema: { hide: true } };
  app.get<{ Params: { name: string } }>('/assets/:name', opts, async (req, reply) =>
    send(file(req.params.name), req, reply),
  );
  for (const [prefix, source] of all)
    if ('folder' in source)
      app.get<{ Params: { name: string } }>(`/assets/${prefix}:name`, opts, async (req, reply) => {
        const f = path.join(source.folder, req.params.name);
        return send(folderHas(source.folder, req.params.name) ? loadOnce(f, f) : undefined, req, reply);
      });
  return assets;
}
