// Sending from the dashboard: drafts (a PDF checked like an API upload, stored in the blob store, with the form and
// fields kept as typed) and the send itself, which calls signing/create.ts's createSigningRequest, the function
// behind POST /v1/signing-requests, as the signed-in person (actingAs: the audit trail names `user:<email>`), with
// `placement: "coordinates"`. Guarantees: a draft is read and changed only within the viewer's workspace; nothing
// is sent while a field is off its page, overlaps another or has no signer (checked here again, whatever the editor
// showed); the body is checked against the API's own schema before the call, so the API's limits hold; the draft is
// deleted only after the document was created.
import { Value } from 'typebox/value';
import { iso } from '../lib/clock.js';
import { ApiError, apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { MAX_FILE_BYTES } from '../limits.js';
import type { ClientMeta } from '../http/request-context.js';
import { createSigningRequest } from '../signing/create.js';
import { CreateBody } from '../signing/signing.schemas.js';
import { hasFeature } from '../workspaces/features.js';
import type { DashboardDeps } from './dashboard.service.js';
import { deleteDraft, findDraft, insertDraft, listDrafts, saveDraft, type DraftRow } from './drafts.repo.js';
import { actingAsSender, type Viewer } from './people.service.js';
import {
  emptyForm,
  fieldProblems,
  formPathOf,
  roleOf,
  signersInOrder,
  toCreateBody,
  type DraftField,
  type FieldProblem,
  type PageSize,
  type SendForm,
} from './send.form.js';
import type { DashboardKey } from './words.js';
import { workspaceLocale } from '../workspaces/settings.service.js';

export const DRAFTS_LISTED = 50;

/** A new send form: the workspace's default language preselected, or, without one, the page's (`pageLocale`). */
export const newSendForm = async (deps: DashboardDeps, v: Viewer, pageLocale: string): Promise<SendForm> =>
  emptyForm((await workspaceLocale(deps.db, v.workspace.id)) ?? pageLocale);

/** A refusal the send page shows: our words (`key`) and, from the API, its English message; `at` marks the input. */
export class SendRefused extends Error {
  constructor(
    readonly key: DashboardKey,
    readonly apiMessage: string | null = null,
    readonly at: string | null = null,
    readonly problems: FieldProblem[] = [],
  ) {
    super(apiMessage ?? key);
  }
}

export type Draft = {
  id: string;
  fileName: string;
  pages: PageSize[];
  form: SendForm;
  fields: DraftField[];
  createdAt: string;
  updatedAt: string;
};

const present = (r: DraftRow): Draft => ({
  id: r.id,
  fileName: r.file_name,
  pages: JSON.parse(r.pages) as PageSize[],
  form: JSON.parse(r.form) as SendForm,
  fields: JSON.parse(r.fields) as DraftField[],
  createdAt: iso(Number(r.created_at)),
  updatedAt: iso(Number(r.updated_at)),
});

/** Verification methods the workspace's plan offers (SMS codes are Enterprise). */
export const verificationsFor = (v: Viewer): string[] =>
  hasFeature(v.workspace.tier, 'sms_verification') ? ['none', 'email_code', 'sms_code'] : ['none', 'email_code'];

/** A new draft from an upload: the PDF must be one the API would take (size, pages, readable), checked the same way. */
export async function createDraft(
  deps: DashboardDeps,
  v: Viewer,
  upload: { fileName: string; bytes: Uint8Array | null },
  form: SendForm,
): Promise<string> {
  if (!upload.bytes || upload.bytes.length === 0) throw new SendRefused('send.noFile', null, 'file');
  if (upload.bytes.length > MAX_FILE_BYTES) throw new SendRefused('send.tooBig', null, 'file');
  let pages: PageSize[];
  try {
    const info = await deps.pdf.inspect(upload.bytes);
    pages = info.pages.map((p) => ({ width: p.width, height: p.height }));
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) throw new SendRefused('send.notPdf', err.message, 'file');
    throw err;
  }
  const now = deps.clock.now();
  const id = newId('drf');
  const bytes = upload.bytes;
  // One transaction: a draft row that cannot be written takes its file with it (blob-store.ts).
  await deps.db.kysely.transaction().execute(async (trx) =>
    insertDraft(trx, {
      id,
      workspace_id: v.workspace.id,
      created_by: v.user.id,
      file_name: (upload.fileName || 'document.pdf').slice(0, 255),
      pdf_blob: await deps.blobs.put(bytes, 'draft', trx),
      pages: JSON.stringify(pages),
      form: JSON.stringify(form),
      fields: JSON.stringify([]),
      created_at: now,
      updated_at: now,
    }),
  );
  return id;
}

export async function getDraft(deps: DashboardDeps, v: Viewer, id: string): Promise<Draft> {
  const r = await findDraft(deps.db.kysely, v.workspace.id, id);
  if (!r) throw apiError('not_found');
  return present(r);
}

export async function draftPdf(deps: DashboardDeps, v: Viewer, id: string): Promise<Uint8Array> {
  const r = await findDraft(deps.db.kysely, v.workspace.id, id);
  if (!r) throw apiError('not_found');
  return deps.blobs.get(r.pdf_blob);
}

export async function draftList(deps: DashboardDeps, v: Viewer) {
  const rows = await listDrafts(deps.db.kysely, v.workspace.id, DRAFTS_LISTED);
  return rows.map((r) => ({
    id: r.id,
    fileName: r.file_name,
    title: (JSON.parse(r.form) as SendForm).title,
    by: r.created_by_email,
    updatedAt: iso(Number(r.updated_at)),
  }));
}

/** Keeps the form and fields as given; the time it was saved. */
export async function saveDraftAs(
  deps: DashboardDeps,
  v: Viewer,
  id: string,
  form: SendForm,
  fields: DraftField[],
): Promise<string> {
  const now = deps.clock.now();
  const ok = await saveDraft(deps.db.kysely, v.workspace.id, id, {
    form: JSON.stringify(form),
    fields: JSON.stringify(fields),
    updated_at: now,
  });
  if (!ok) throw apiError('not_found');
  return iso(now);
}

export async function removeDraft(deps: DashboardDeps, v: Viewer, id: string): Promise<void> {
  if (!(await deleteDraft(deps.db.kysely, v.workspace.id, id))) throw apiError('not_found');
}

/** The first place the API's schema refuses the body, as the API would word it. */
function schemaCheck(body: unknown): void {
  if (Value.Check(CreateBody, body)) return;
  const first = [...Value.Errors(CreateBody, body)][0];
  const path = (first?.instancePath ?? '')
    .replace(/^\//, '')
    .replace(/\/(\d+)/g, '[$1]')
    .replace(/\//g, '.');
  throw apiError('invalid_request', {
    message: `${path || 'body'} ${first?.message ?? 'is invalid'}.`,
    meta: { field: path },
  });
}

/**
 * Sends the saved draft: the dashboard's own checks, then the API's function as the viewer; the draft is deleted
 * once the document exists. Returns the new document's id; a refusal is a SendRefused naming the input.
 */
export async function sendDraft(deps: DashboardDeps, v: Viewer, id: string, meta: ClientMeta): Promise<string> {
  const d = await getDraft(deps, v, id);
  const order = signersInOrder(d.form);
  if (order.length === 0) throw new SendRefused('send.noSigners', null, 'signers.0.name');
  if (d.fields.length === 0) throw new SendRefused('send.noFields', null, 'fields');
  const problems = fieldProblems(d.fields, d.pages, d.form);
  if (problems.length) throw new SendRefused('send.fieldProblems', null, `fields.${problems[0]!.field}`, problems);

  const pdf = await draftPdf(deps, v, id);
  const body = toCreateBody(d.form, d.fields, {
    name: d.fileName,
    content_base64: Buffer.from(pdf).toString('base64'),
  });
  let created: { document_id: string };
  try {
    schemaCheck(body);
    created = await createSigningRequest(deps, await actingAsSender(deps.db, v), body, meta);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const problems = err.meta?.problems;
    const field = Array.isArray(problems) ? (problems[0] as { field?: string })?.field : err.meta?.field;
    // A refusal naming a role (no signature field for it) points at that signer's row.
    const row = order.find(({ row, index }) => roleOf(row, index) === err.meta?.role);
    const at = row ? `signers.${row.index}.name` : formPathOf(field, order);
    throw new SendRefused('send.refused', err.message, at);
  }
  await deleteDraft(deps.db.kysely, v.workspace.id, id);
  return created.document_id;
}
