// GET /verify (the upload form) and POST /verify (multipart: the report as a page), in the visitor's language.
// Key-less, under the per-address limit of every key-less route; the upload takes the same byte budget and deadline
// as an API upload, and nothing is stored. Wiring only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { fill, strings } from '../i18n/i18n.js';
import { ApiError } from '../lib/errors.js';
import { FILE_BODY_LIMIT } from '../limits.js';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { localeFromAcceptLanguage } from '../web/html.js';
import { pageHeaders } from '../web/headers.js';
import { brandStyleSource, type PageBrand } from '../web/brand.js';
import { renderVerifyPage } from './verify-page.js';
import { verifyWithSender, type VerificationDeps } from './verification.service.js';
import type { VerificationOut } from './verification.schemas.js';

/** The page's headers; a report naming a branded workspace allows its one accent style element by hash. */
const headersFor = (brand?: PageBrand | null) => {
  const style = brandStyleSource(brand);
  return pageHeaders({
    csp: { ...(style ? { styles: ['self', style] } : {}), formActions: ['self'], frameAncestors: ['none'] },
    noSniff: true,
  });
};
const HEADERS = headersFor();

export async function verifyPageRoutes(app: FastifyInstance, deps: VerificationDeps): Promise<void> {
  await app.register(multipart, { limits: { fileSize: FILE_BODY_LIMIT, files: 1, fields: 0, parts: 1 } });
  const page = (
    req: FastifyRequest,
    reply: FastifyReply,
    code: number,
    extra: { error?: string } | { report: VerificationOut; brand: PageBrand | null } = {},
  ) => {
    const locale = localeFromAcceptLanguage(req.headers['accept-language']);
    const brand = 'brand' in extra ? (extra.brand as PageBrand | null) : null;
    return reply
      .code(code)
      .headers(brand ? headersFor(brand) : HEADERS)
      .type('text/html; charset=utf-8')
      .send(renderVerifyPage({ locale, stylesheet: app.assets.url('verify.css'), ...extra }));
  };

  app.get('/verify', { schema: { hide: true } }, async (req, reply) => page(req, reply, 200));

  app.post('/verify', { ...UPLOAD_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const locale = localeFromAcceptLanguage(req.headers['accept-language']);
    const s = strings(locale, 'verify');
    let bytes: Buffer | undefined;
    try {
      if (!req.isMultipart()) return page(req, reply, 400, { error: s['page.errorNoFile'] });
      bytes = await (await req.file())?.toBuffer();
    } catch (err) {
      if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
        return page(req, reply, 413, { error: fill(s['page.errorTooLarge'], { mb: FILE_BODY_LIMIT / 1024 / 1024 }) });
      return page(req, reply, 400, { error: s['page.errorInvalid'] });
    }
    if (!bytes || bytes.length === 0) return page(req, reply, 400, { error: s['page.errorNoFile'] });
    try {
      const found = await verifyWithSender(
        deps,
        new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        locale,
      );
      return page(req, reply, 200, found);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return page(req, reply, 400, { error: s['page.errorInvalid'] });
      throw err;
    }
  });
}
