// Bulk send pages (wiring; the page data is bulk.service.ts's, the rules the API's): the upload page, its example
// CSV, the dry run, "Send N rows", and a send's progress. The two POSTs are multipart forms (the file, or the CSV
// carried over from the dry run in a hidden field); their fields are on req.body, so the CSRF check reads `_csrf`
// as it does for any form.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { clientMeta } from '../http/request-context.js';
import { BULK_BODY_LIMIT } from '../limits.js';
import type { DashboardDeps } from './dashboard.service.js';
import type { PeopleDeps } from './people.service.js';
import {
  bulkDryRun,
  bulkExample,
  bulkPage,
  bulkProgress,
  bulkSend,
  isRefusal,
  type BulkForm,
  type Refusal,
} from './bulk.service.js';
import { page, query, say } from './render.js';

/** Seconds between a running send's page loads (the Refresh header; the page also has a link). */
const REFRESH_SECONDS = 2;

/** The form's fields as bulk.service.ts takes them (a browser sends an empty file part when none was chosen). */
function formOf(req: FastifyRequest): BulkForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : undefined);
  const file = body.file as Buffer | string | undefined;
  const name = (req as FastifyRequest & { fileName?: string }).fileName ?? '';
  return {
    csv: text('csv'),
    version: text('version'),
    form_key: text('form_key'),
    ...(Buffer.isBuffer(file) ? { file: { name, bytes: file } } : {}),
  };
}

export async function bulkRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: BULK_BODY_LIMIT, fieldSize: BULK_BODY_LIMIT, files: 1, fields: 4, parts: 5 },
    // Keep the chosen file's name (a name that is not .csv is refused with words, not parsed).
    async onFile(part) {
      await part.toBuffer();
      (this as unknown as FastifyRequest & { fileName?: string }).fileName = part.filename;
    },
  });
  type Id = { Params: { id: string } };
  const upload = async (
    req: FastifyRequest<Id>,
    reply: Parameters<typeof page>[0],
    refusal: Refusal | null,
    extra: object = {},
  ) => {
    const form = formOf(req);
    if (refusal) reply.code(400);
    return page(reply, req, 'bulk.eta', {
      ...(await bulkPage(deps, req.viewer!, req.params.id, form.version ?? query(req).version)),
      refusal: refusal && ('message' in refusal ? { text: say(req, refusal.message) } : { english: refusal.english }),
      ...extra,
    });
  };

  app.get<Id>('/templates/:id/bulk', async (req, reply) =>
    page(reply, req, 'bulk.eta', {
      ...(await bulkPage(deps, req.viewer!, req.params.id, query(req).version)),
      refusal: null,
    }),
  );

  app.get<Id>('/templates/:id/bulk/example.csv', async (req, reply) => {
    const ex = await bulkExample(deps, req.viewer!, req.params.id, query(req).version);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${ex.name}"`)
      .send(ex.csv);
  });

  app.post<Id>('/templates/:id/bulk/dry-run', async (req, reply) => {
    const out = await bulkDryRun(deps, req.viewer!, req.params.id, formOf(req));
    if (isRefusal(out)) return upload(req, reply, out);
    return upload(req, reply, null, { dryRun: out });
  });

  app.post<Id>('/templates/:id/bulk', async (req, reply) => {
    const out = await bulkSend(deps, req.viewer!, req.params.id, formOf(req), clientMeta(req));
    if (isRefusal(out)) return upload(req, reply, out);
    return reply.redirect(`/dashboard/bulk-sends/${encodeURIComponent(out.id)}`, 303);
  });

  app.get<Id>('/bulk-sends/:id', async (req, reply) => {
    const data = await bulkProgress(deps, req.viewer!, req.params.id);
    // Without JavaScript the page reloads itself while the job runs (a header: no inline script, no layout change).
    if (data.bulk.running) reply.header('refresh', String(REFRESH_SECONDS));
    return page(reply, req, 'bulk-send.eta', data);
  });
}
