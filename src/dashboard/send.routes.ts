// Sending from the dashboard: the upload form and drafts list, a draft's field editor, its PDF, saving (a form post,
// or the editor's JSON autosave), deleting and sending (wiring; the rules are in send.service.ts and send.form.ts).
// Multipart is registered for these routes only (the rest of the dashboard takes urlencoded forms of 64 KB): the
// upload has the API's byte limits and upload budget; a file over the limit is read no further and answered as a
// refusal on the form, which keeps what was typed. The CSRF token is a form field (or the JSON's `_csrf`), checked
// by the dashboard's preHandler like every post.
import { editorPdfjs } from './dashboard.assets.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { LOCALE_NAMES } from '../i18n/i18n.js';
import { clientMeta } from '../http/request-context.js';
import { UPLOAD_ROUTE } from '../http/upload-budget.js';
import { MAX_FIELDS, MAX_FILE_BYTES, MAX_PDF_PAGES, MAX_SIGNERS } from '../limits.js';
import type { DashboardDeps } from './dashboard.service.js';
import type { PeopleDeps } from './people.service.js';
import { localeOf, notice, page, query, say, type Notices } from './render.js';
import { emptySigner, flattenForm, PALETTE, readFields, readForm, type SendForm } from './send.form.js';
import {
  createDraft,
  draftList,
  draftPdf,
  getDraft,
  newSendForm,
  removeDraft,
  saveDraftAs,
  SendRefused,
  sendDraft,
  verificationsFor,
  type Draft,
} from './send.service.js';

const NOTICES: Notices = { deleted: 'send.deleted', created: 'send.created', saved: 'send.saved' };
const MB = MAX_FILE_BYTES / 1024 / 1024;
/** Requests whose file passed MAX_FILE_BYTES: the rest of it was skipped, the form is read as usual. */
const tooLarge = new WeakSet<FastifyRequest>();
/** The uploaded file's name (the key-value body holds only its bytes). */
const fileNames = new WeakMap<FastifyRequest, string>();

type DraftParams = { Params: { draft: string } };
type Body = Record<string, unknown>;

export async function sendRoutes(app: FastifyInstance, deps: DashboardDeps & PeopleDeps): Promise<void> {
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    throwFileSizeLimit: false,
    // Fields: the details, 6 a signer row, and the no-script table's 11 a field row (plus its spare row).
    limits: {
      fileSize: MAX_FILE_BYTES,
      files: 1,
      fields: 40 + MAX_SIGNERS * 6 + (MAX_FIELDS + 1) * 11,
      fieldSize: 256 * 1024,
    },
    async onFile(part) {
      fileNames.set(this, part.filename);
      await part.toBuffer();
      if (!part.file.truncated) return;
      tooLarge.add(this);
      (part as unknown as { _buf: Buffer })._buf = Buffer.alloc(0);
    },
  });

  const isJson = (req: FastifyRequest) => /^application\/json\b/.test(String(req.headers['content-type'] ?? ''));
  const bodyOf = (req: FastifyRequest): Body => (req.body && typeof req.body === 'object' ? (req.body as Body) : {});
  const words = (req: FastifyRequest) => ({
    locales: LOCALE_NAMES,
    palette: PALETTE,
    verifications: verificationsFor(req.viewer!),
    limits: { mb: MB, pages: MAX_PDF_PAGES, signers: MAX_SIGNERS },
  });
  /** The upload page: drafts, the form (as typed after a refusal, with a spare signer row). */
  const uploadPage = async (req: FastifyRequest, reply: FastifyReply, form: SendForm, extra: object = {}) =>
    page(reply, req, 'send.eta', {
      ...words(req),
      drafts: await draftList(deps, req.viewer!),
      form: withSpareRow(form),
      notice: notice(req, NOTICES, query(req).done),
      ...extra,
    });
  const editorPage = (req: FastifyRequest, reply: FastifyReply, d: Draft, extra: object = {}) => {
    const a = reply.server.assets;
    const pdf = `/dashboard/send/${encodeURIComponent(d.id)}/document.pdf`;
    return page(reply, req, 'send-draft.eta', {
      ...words(req),
      draft: d,
      form: withSpareRow(d.form),
      pdf,
      styles: [a.url('send.css')],
      modules: [a.url('send.js')],
      editor: {
        pdf,
        save: `/dashboard/send/${encodeURIComponent(d.id)}`,
        pages: d.pages,
        fields: d.fields,
        editor: a.url('field-editor.js'),
        pdfjs: editorPdfjs(a),
      },
      notice: notice(req, NOTICES, query(req).done),
      ...extra,
    });
  };
  /** A refusal as the page shows it: our words, the API's English (marked), where. */
  const refusal = (req: FastifyRequest, err: SendRefused) => ({
    error: say(req, { key: err.key, vars: { mb: MB } }),
    apiError: err.apiMessage,
    errorAt: err.at,
    problems: err.problems,
  });

  app.get('/send', async (req, reply) => uploadPage(req, reply, await newSendForm(deps, req.viewer!, localeOf(req))));

  app.post('/send', UPLOAD_ROUTE, async (req, reply) => {
    const body = bodyOf(req);
    const form = readForm(body);
    const file = body.file;
    try {
      if (tooLarge.has(req)) throw new SendRefused('send.tooBig', null, 'file');
      const id = await createDraft(
        deps,
        req.viewer!,
        { fileName: fileNames.get(req) ?? '', bytes: Buffer.isBuffer(file) ? new Uint8Array(file) : null },
        form,
      );
      return reply.redirect(`/dashboard/send/${id}?done=created`, 303);
    } catch (err) {
      if (!(err instanceof SendRefused)) throw err;
      reply.code(err.key === 'send.tooBig' ? 413 : 400);
      return uploadPage(req, reply, form, refusal(req, err));
    }
  });

  app.get<DraftParams>('/send/:draft', async (req, reply) =>
    editorPage(req, reply, await getDraft(deps, req.viewer!, req.params.draft)),
  );

  app.get<DraftParams>('/send/:draft/document.pdf', async (req, reply) => {
    const pdf = await draftPdf(deps, req.viewer!, req.params.draft);
    return reply.type('application/pdf').header('content-disposition', 'inline').send(Buffer.from(pdf));
  });

  /** Saves what the request carries (the editor's JSON, or the form); a refusal when a field row is unreadable. */
  async function save(req: FastifyRequest, id: string): Promise<void> {
    const body = bodyOf(req);
    const flat = isJson(req) ? { ...flattenForm(body.form), fields: body.fields } : body;
    const fields = readFields(flat);
    if (!Array.isArray(fields)) throw new SendRefused('send.badNumber', null, `fields.${fields.bad}`);
    await saveDraftAs(deps, req.viewer!, id, readForm(flat), fields);
  }

  app.post<DraftParams>('/send/:draft', async (req, reply) => {
    const id = req.params.draft;
    try {
      await save(req, id);
    } catch (err) {
      if (!(err instanceof SendRefused)) throw err;
      if (isJson(req)) return reply.code(400).send({ error: say(req, { key: err.key, vars: { mb: MB } }) });
      reply.code(400);
      return editorPage(req, reply, await getDraft(deps, req.viewer!, id), refusal(req, err));
    }
    if (isJson(req)) return reply.send({ saved_at: new Date(deps.clock.now()).toISOString() });
    return reply.redirect(`/dashboard/send/${encodeURIComponent(id)}?done=saved`, 303);
  });

  app.post<DraftParams>('/send/:draft/send', async (req, reply) => {
    const id = req.params.draft;
    try {
      // The editor's form posts here too (its Send button): what it shows is saved first.
      if (Object.keys(bodyOf(req)).some((k) => k !== '_csrf')) await save(req, id);
      const doc = await sendDraft(deps, req.viewer!, id, clientMeta(req));
      return reply.redirect(`/dashboard/documents/${encodeURIComponent(doc)}?done=sent`, 303);
    } catch (err) {
      if (!(err instanceof SendRefused)) throw err;
      reply.code(400);
      return editorPage(req, reply, await getDraft(deps, req.viewer!, id), refusal(req, err));
    }
  });

  app.post<DraftParams>('/send/:draft/delete', async (req, reply) => {
    await removeDraft(deps, req.viewer!, req.params.draft);
    return reply.redirect('/dashboard/send?done=deleted', 303);
  });
}

/** The form with one blank signer row after the last (the no-script way to add a signer: fill it in, save). */
function withSpareRow(form: SendForm): SendForm {
  const last = form.signers[form.signers.length - 1];
  const blank = last && !last.name && !last.email && !last.phone;
  return blank || form.signers.length >= MAX_SIGNERS ? form : { ...form, signers: [...form.signers, emptySigner()] };
}
