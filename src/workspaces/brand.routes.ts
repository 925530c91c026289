// GET /brand/:workspace/logo/:token, the one public address of a workspace's logo (pages, mails and embedders link
// it). Guarantees: only the current logo's token answers (an old token, an unknown workspace or no logo: 404), with
// its stored type, never sniffed, under a policy that lets nothing run, cached for a year: the token changes with
// the logo (brand.ts).
import type { FastifyInstance } from 'fastify';
import type { BlobStore } from '../documents/blob-store.js';
import type { Db } from '../db/db.js';
import { apiError } from '../lib/errors.js';
import { safeEqual } from '../lib/crypto.js';
import { brandOf, logoToken } from './brand.js';
import { findWorkspace } from './workspaces.repo.js';

// Any other shape is simply no logo: 404, like an address that does not exist (not a 400 for a malformed request).
const WORKSPACE = /^ws_[0-9a-f]{1,64}$/;
const TOKEN = /^[0-9a-f]{16}$/;

export async function brandRoutes(app: FastifyInstance, deps: { db: Db; blobs: BlobStore }): Promise<void> {
  app.get<{ Params: { workspace: string; token: string } }>(
    '/brand/:workspace/logo/:token',
    { schema: { hide: true } },
    async (req, reply) => {
      const { workspace, token } = req.params;
      if (!WORKSPACE.test(workspace) || !TOKEN.test(token)) throw apiError('not_found');
      const row = await findWorkspace(deps.db.kysely, workspace);
      const logo = row ? brandOf(row).logo : null;
      if (!logo || !safeEqual(logoToken(logo.blob), token)) throw apiError('not_found');
      // Replaced between the row's read and this one (its blob deleted after that commit): gone, like any old token.
      const bytes = await deps.blobs.get(logo.blob).catch(() => null);
      if (!bytes) throw apiError('not_found');
      return reply
        .headers({
          'content-type': logo.type,
          'x-content-type-options': 'nosniff',
          'content-security-policy': "default-src 'none'; sandbox",
          'cache-control': 'public, max-age=31536000, immutable',
          // Mail clients and embedding sites show it too.
          'cross-origin-resource-policy': 'cross-origin',
          'content-disposition': 'inline; filename="logo"',
        })
        .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    },
  );
}
