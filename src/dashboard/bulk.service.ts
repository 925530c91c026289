// Bulk send from the dashboard (issue 24): the page data around the API's own services. Guarantees: every rule
// (which rows are good, the cap, the channels, who sends) is bulk-sends.service.ts's, called with the signed-in
// person's AuthContext (`actingAs`), so the instances' trails name `user:<email>`; a refusal the API words for the
// whole upload comes back as a message for the form (English, the API's catalogue), never a half-made send.
import { randomBytes } from 'node:crypto';
import { ApiError } from '../lib/errors.js';
import type { ClientMeta } from '../http/request-context.js';
import { MAX_BULK_ROWS } from '../limits.js';
import { versionFields, versionSlots } from '../templates/presenters.js';
import { templateOf, versionOf } from '../templates/templates.service.js';
import { decodeCsv, exampleColumns, exampleCsv } from '../templates/bulk-sends.csv.js';
import { createBulkSend, dryRunBulkSend, getBulkSend } from '../templates/bulk-sends.service.js';
import { sentRowDocuments } from '../templates/bulk-sends.repo.js';
import type { DashboardDeps } from './dashboard.service.js';
import { actingAs, type Viewer } from './people.service.js';
import type { Message } from './words.js';

/** What the form posted: the file (multipart) or the CSV carried over from the dry run, and the version. */
export type BulkForm = { file?: { name: string; bytes: Buffer }; csv?: string; version?: string; form_key?: string };

/** The Send form's one-time key: posted twice (a double click, a resubmitted page), it still makes one send. */
const FORM_KEY = /^[0-9a-f]{32}$/;

/** A refusal for the form: our words (no file, not a CSV, too many rows), or the API's English. */
export type Refusal = { message: Message } | { english: string };

/** The template and the version the page is about (the current one unless `version` names another). */
async function subject(deps: DashboardDeps, v: Viewer, templateId: string, version?: string) {
  const auth = actingAs(v);
  const tpl = await templateOf(deps, auth, templateId, { archived: false });
  const n = version && /^\d{1,9}$/.test(version) ? Number(version) : undefined;
  const ver = await versionOf(deps, tpl, n);
  return { tpl, ver };
}

/** The upload page: the template, its versions, the example's columns. */
export async function bulkPage(deps: DashboardDeps, v: Viewer, templateId: string, version?: string) {
  const { tpl, ver } = await subject(deps, v, templateId, version);
  return {
    template: { id: tpl.id, name: tpl.name, current: tpl.current_version },
    version: ver.version,
    versions: Array.from({ length: tpl.current_version }, (_, i) => tpl.current_version - i),
    columns: exampleColumns(versionSlots(ver), versionFields(ver)),
    maxRows: MAX_BULK_ROWS,
  };
}

/** GET …/bulk/example.csv: the version's header and one example row. */
export async function bulkExample(deps: DashboardDeps, v: Viewer, templateId: string, version?: string) {
  const { tpl, ver } = await subject(deps, v, templateId, version);
  return { name: `${tpl.id}-v${ver.version}-bulk-example.csv`, csv: exampleCsv(versionSlots(ver), versionFields(ver)) };
}

/** The CSV text of the form, or the refusal to show (no file; a file that is not a CSV). */
function csvOf(form: BulkForm): { csv: string } | Refusal {
  if (form.csv !== undefined && form.csv.trim() !== '') return { csv: form.csv };
  if (!form.file || form.file.bytes.length === 0) return { message: { key: 'bulk.noFile' } };
  if (!/\.(csv|txt)$/i.test(form.file.name) || form.file.bytes.subarray(0, 5).toString('latin1') === '%PDF-')
    return { message: { key: 'bulk.notCsv', vars: { name: form.file.name } } };
  try {
    return { csv: decodeCsv(form.file.bytes) };
  } catch (err) {
    return refusalOf(err);
  }
}

function refusalOf(err: unknown): Refusal {
  if (!(err instanceof ApiError) || err.status >= 500) throw err;
  if (err.meta?.field === 'rows' && err.meta?.max === MAX_BULK_ROWS)
    return { message: { key: 'bulk.tooMany', vars: { max: MAX_BULK_ROWS } } };
  return { english: err.message };
}

/** Runs `fn`, turning a refusal of the whole upload into the form's message. */
async function orRefusal<T>(fn: () => Promise<T>): Promise<T | Refusal> {
  try {
    return await fn();
  } catch (err) {
    return refusalOf(err);
  }
}

export const isRefusal = (x: object): x is Refusal => 'message' in x || 'english' in x;

/** The dry run of the upload: every bad row, and the CSV to send if the person goes on. */
export async function bulkDryRun(deps: DashboardDeps, v: Viewer, templateId: string, form: BulkForm) {
  const { tpl, ver } = await subject(deps, v, templateId, form.version);
  const read = csvOf(form);
  if (!('csv' in read)) return read;
  const csv = read.csv;
  const out = await orRefusal(() => dryRunBulkSend(deps, actingAs(v), tpl.id, { csv, version: ver.version }));
  return isRefusal(out) ? out : { ...out.dry_run, csv, formKey: randomBytes(16).toString('hex') };
}

/** "Send N rows": the bulk send created (queued for the job), or the refusal to show. */
export async function bulkSend(deps: DashboardDeps, v: Viewer, templateId: string, form: BulkForm, meta: ClientMeta) {
  const { tpl, ver } = await subject(deps, v, templateId, form.version);
  const read = csvOf(form);
  if (!('csv' in read)) return read;
  const csv = read.csv;
  const formKey = FORM_KEY.test(form.form_key ?? '') ? form.form_key : undefined;
  const out = await orRefusal(() =>
    createBulkSend(deps, actingAs(v), tpl.id, { csv, version: ver.version }, meta, { formKey }),
  );
  return isRefusal(out) ? out : { id: out.bulk_send.id };
}

/** The progress page: counters, whether it is still going, each row's outcome with its document. */
export async function bulkProgress(deps: DashboardDeps, v: Viewer, id: string) {
  const { bulk_send: b } = await getBulkSend(deps, actingAs(v), id);
  const docs = new Map((await sentRowDocuments(deps.db.kysely, b.id)).map((r) => [r.row, r.document_id]));
  const running = b.status === 'queued' || b.status === 'running';
  return {
    bulk: { ...b, done: b.sent + b.failed, running },
    rows: b.rows.map((r) => ({ ...r, documentId: docs.get(r.row) ?? null })),
  };
}
