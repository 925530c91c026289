// Templates and reviews pages (wiring; the rules are the API's, called by templates.service.ts and
// template-editor.ts). The create and publish forms are multipart (a PDF); their body is read in this plugin's
// preValidation only for a person the role table lets through, so nobody else gets an upload buffered, and the
// parent's CSRF check then reads `_csrf` from it like any form.
import { editorPdfjs } from './dashboard.assets.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { clientMeta } from '../http/request-context.js';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import type { TemplateMarker } from '../documents/pdf/template-placement.js';
import { apiError } from '../lib/errors.js';
import { MAX_FILE_BYTES, MAX_FIELDS } from '../limits.js';
import type { DashboardDeps } from './dashboard.service.js';
import { viewerOf, type PeopleDeps } from './people.service.js';
import { notice, page, query, say, type Form, type Notices } from './render.js';
import { verdict } from './roles.js';
import { SESSION_COOKIE } from './session-cookie.js';
import {
  createFromForm,
  editorFacts,
  FIELD_TYPES,
  formOf,
  keepUpload,
  publishFromForm,
  refusal,
  rowsFromMarkers,
  rowsFromVersion,
  uploadBytes,
  uploadId,
  versionPdf,
  withSpares,
  type EditorForm,
} from './template-editor.js';
import {
  archive,
  archivePage,
  confirmReview,
  discardReview,
  reviewList,
  templateList,
  useForm,
  useTemplate,
  versionPage,
} from './templates.service.js';

type File = { name: string; bytes: Uint8Array };
const NOTICES: Notices = {
  created: 'templates.created',
  published: 'templates.published',
  archived: 'templates.archivedNotice',
};
const REVIEW_NOTICES: Notices = {
  staged: 'reviews.staged',
  confirmed: 'reviews.confirmed',
  discarded: 'reviews.discarded',
};

export async function templatesRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  await app.register(multipart, {
    limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 20 * MAX_FIELDS, parts: 20 * MAX_FIELDS + 1 },
  });
  app.addHook('preValidation', async (req) => {
    if (!req.isMultipart()) return;
    const viewer = await viewerOf(deps, req.cookies[SESSION_COOKIE]);
    if (!verdict(req.method, req.routeOptions.url, viewer?.role ?? null).pass) return;
    req.body = await readParts(req);
  });

  type Id = { Params: { id: string } };
  const upload = { ...UPLOAD_ROUTE };
  /**
   * The form page: the rows, and what the visual editor (template-fields.js) draws them on: the PDF's URL (`pdf`,
   * null when there is none to draw), its pages and markers. Without JavaScript only the rows are used.
   */
  const editor = async (
    reply: FastifyReply,
    f: EditorForm,
    pdf: { url: string; bytes: Uint8Array } | null,
    extra: Record<string, unknown>,
    scan?: { markers: TemplateMarker[] },
  ) => {
    const a = reply.server.assets;
    // A PDF the workers cannot read again only loses the drawing: the rows still work.
    const facts = pdf ? await editorFacts(deps, pdf.bytes, scan).catch(() => null) : null;
    return {
      form: withSpares(f),
      types: FIELD_TYPES,
      styles: [a.url('send.css')],
      modules: facts ? [a.url('template-fields.js')] : [],
      visual: facts && {
        pdf: pdf!.url,
        pages: facts.pages,
        markers: facts.markers,
        anchorMin: facts.anchorMin,
        editor: a.url('field-editor.js'),
        pdfjs: editorPdfjs(a),
      },
      ...extra,
    };
  };
  /** The kept upload a form names, as the editor draws it (null when the key is not this workspace's). */
  const uploadOf = async (req: FastifyRequest, key: string) => {
    const hex = uploadId(key);
    const bytes = hex ? await uploadBytes(deps, req.viewer!, hex) : null;
    return bytes && { url: `/dashboard/templates/uploads/${hex}/document.pdf`, bytes };
  };
  const versionFile = async (req: FastifyRequest, id: string, n: number) => ({
    url: `${tplHref(id)}/versions/${n}/document.pdf`,
    bytes: await versionPdf(deps, req.viewer!, id, n),
  });
  const pdfReply = (reply: FastifyReply, bytes: Uint8Array) =>
    reply
      .type('application/pdf')
      .header('content-disposition', 'inline')
      .header('cache-control', 'private, no-store')
      .send(Buffer.from(bytes));
  const tplHref = (id: string, q = '') => `/dashboard/templates/${encodeURIComponent(id)}${q}`;

  app.get('/templates', async (req, reply) => {
    const q = query(req);
    return page(reply, req, 'templates.eta', {
      ...(await templateList(deps, req.viewer!, q)),
      notice: notice(req, NOTICES, q.done),
    });
  });

  app.get('/templates/new', async (req, reply) => page(reply, req, 'template-new.eta', { name: '' }));

  app.post('/templates/new', upload, async (req, reply) => {
    const body = (req.body ?? {}) as Form & { pdf?: File; fileError?: string };
    if (body.fileError || (!body.upload && !body.pdf)) {
      reply.code(body.fileError ? 413 : 400);
      return page(reply, req, 'template-new.eta', {
        name: body.name ?? '',
        errors: [say(req, { key: body.fileError ? 'templates.tooLarge' : 'templates.noPdf' })],
      });
    }
    if (body.pdf) {
      // Step 1: keep the PDF, offer its markers as fields.
      try {
        const scan = await deps.pdf.templateMarkers(body.pdf.bytes);
        const key = await keepUpload(deps, req.viewer!, body.pdf.bytes);
        const rows = rowsFromMarkers(scan.markers);
        const form = { name: body.name ?? '', upload: key, fileName: body.pdf.name, ...rows };
        const extra = { mode: 'new', markers: scan.markers.length };
        const pdf = await uploadOf(req, key);
        return page(reply, req, 'template-form.eta', await editor(reply, form, pdf, extra, scan));
      } catch (err) {
        reply.code(400);
        return page(reply, req, 'template-new.eta', { name: body.name ?? '', apiErrors: refusal(err) });
      }
    }
    const form = formOf(body);
    try {
      const t = await createFromForm(deps, req.viewer!, body, form);
      return reply.redirect(tplHref(t.id, '?done=created'), 303);
    } catch (err) {
      const apiErrors = refusal(err);
      reply.code(400);
      const pdf = await uploadOf(req, form.upload);
      return page(reply, req, 'template-form.eta', await editor(reply, form, pdf, { mode: 'new', apiErrors }));
    }
  });

  const showVersion = async (req: FastifyRequest, id: string, n?: number) => {
    const q = query(req);
    return {
      ...(await versionPage(deps, req.viewer!, id, n)),
      notice: notice(req, NOTICES, q.done),
      pagesChanged: q.pages === 'changed',
    };
  };
  app.get<Id>('/templates/:id', async (req, reply) =>
    page(reply, req, 'template.eta', await showVersion(req, req.params.id)),
  );
  app.get<{ Params: { id: string; n: string } }>('/templates/:id/versions/:n', async (req, reply) => {
    if (!/^[1-9][0-9]{0,6}$/.test(req.params.n)) throw apiError('not_found');
    return page(reply, req, 'template.eta', await showVersion(req, req.params.id, Number(req.params.n)));
  });

  app.get<Id>('/templates/:id/archive', async (req, reply) =>
    page(reply, req, 'template-archive.eta', { tpl: await archivePage(deps, req.viewer!, req.params.id) }),
  );
  app.post<Id>('/templates/:id/archive', async (req, reply) => {
    await archive(deps, req.viewer!, req.params.id);
    return reply.redirect(tplHref(req.params.id, '?done=archived'), 303);
  });

  // The PDFs the visual editor draws: a kept upload (between the two create steps) and a version's original.
  app.get<{ Params: { upload: string } }>('/templates/uploads/:upload/document.pdf', async (req, reply) => {
    const bytes = await uploadBytes(deps, req.viewer!, req.params.upload);
    if (!bytes) throw apiError('not_found');
    return pdfReply(reply, bytes);
  });
  app.get<{ Params: { id: string; n: string } }>('/templates/:id/versions/:n/document.pdf', async (req, reply) => {
    if (!/^[1-9][0-9]{0,6}$/.test(req.params.n)) throw apiError('not_found');
    return pdfReply(reply, await versionPdf(deps, req.viewer!, req.params.id, Number(req.params.n)));
  });

  app.get<Id>('/templates/:id/publish', async (req, reply) => {
    const v = await versionPage(deps, req.viewer!, req.params.id);
    const form = { name: v.tpl.name, upload: '', fileName: '', ...rowsFromVersion(v.version.slots, v.version.fields) };
    const pdf = await versionFile(req, v.tpl.id, v.tpl.current_version);
    return page(reply, req, 'template-form.eta', await editor(reply, form, pdf, { mode: 'publish', tpl: v.tpl }));
  });
  app.post<Id>('/templates/:id/publish', upload, async (req, reply) => {
    const body = (req.body ?? {}) as Form & { pdf?: File; fileError?: string };
    const form = formOf(body);
    const v = await versionPage(deps, req.viewer!, req.params.id);
    const again = async (apiErrors: string[]) => {
      reply.code(body.fileError ? 413 : 400);
      // A refused replacement PDF is not kept: the editor draws the current version's, the rows are as posted.
      const pdf = await versionFile(req, v.tpl.id, v.tpl.current_version);
      const extra = { mode: 'publish', tpl: v.tpl, apiErrors };
      return page(reply, req, 'template-form.eta', await editor(reply, form, pdf, extra));
    };
    if (body.fileError) return again([say(req, { key: 'templates.tooLarge' })]);
    try {
      const r = await publishFromForm(deps, req.viewer!, req.params.id, body, form, body.pdf ?? null);
      const q = `?done=published${r.pagesChanged ? '&pages=changed' : ''}`;
      return reply.redirect(tplHref(req.params.id, q), 303);
    } catch (err) {
      return again(refusal(err));
    }
  });

  app.get<Id>('/templates/:id/use', async (req, reply) =>
    page(reply, req, 'template-use.eta', { ...(await useForm(deps, req.viewer!, req.params.id)), values: {} }),
  );
  app.post<Id>('/templates/:id/use', async (req, reply) => {
    const body = (req.body ?? {}) as Form;
    try {
      const inst = await useTemplate(deps, req.viewer!, req.params.id, body, clientMeta(req));
      return reply.redirect(
        inst.status === 'staged'
          ? `/dashboard/reviews?done=staged#${encodeURIComponent(inst.id)}`
          : `/dashboard/documents/${encodeURIComponent(inst.document_id)}`,
        303,
      );
    } catch (err) {
      const apiErrors = refusal(err);
      reply.code(400);
      return page(reply, req, 'template-use.eta', {
        ...(await useForm(deps, req.viewer!, req.params.id)),
        values: body,
        apiErrors,
      });
    }
  });

  app.get('/reviews', async (req, reply) => {
    const q = query(req);
    return page(reply, req, 'reviews.eta', {
      reviews: await reviewList(deps, req.viewer!),
      notice: notice(req, REVIEW_NOTICES, q.done),
    });
  });
  const act = (fn: typeof confirmReview, done: string) => async (req: FastifyRequest<Id>, reply: FastifyReply) => {
    try {
      await fn(deps, req.viewer!, req.params.id);
      return reply.redirect(`/dashboard/reviews?done=${done}`, 303);
    } catch (err) {
      const apiErrors = refusal(err);
      reply.code(409);
      return page(reply, req, 'reviews.eta', { reviews: await reviewList(deps, req.viewer!), apiErrors });
    }
  };
  app.post<Id>('/reviews/:id/confirm', act(confirmReview, 'confirmed'));
  app.post<Id>('/reviews/:id/discard', act(discardReview, 'discarded'));
}

/** A multipart form: its text fields, and its one file (`{name, bytes}`, absent when none was chosen). */
async function readParts(req: FastifyRequest): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const buf = await part.toBuffer();
        if (buf.length > 0) body[part.fieldname] = { name: part.filename, bytes: new Uint8Array(buf) };
      } else if (typeof part.value === 'string') body[part.fieldname] = part.value;
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== 'FST_REQ_FILE_TOO_LARGE' && code !== 'FST_FILES_LIMIT' && code !== 'FST_PARTS_LIMIT') throw err;
    body.fileError = 'too_large';
  }
  return body;
}
