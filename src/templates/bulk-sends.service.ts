// Bulk sends (issue 24): one upload (CSV or JSON rows) becomes one instance per row, sent by the lease job
// (bulk-sends.job.ts). Guarantees:
// - the upload is refused as a whole (nothing written) for what instantiate refuses before looking at a row: an
//   unknown or archived template, a version with no snapshot, a plan without a channel a row asks for; and for an
//   unreadable body (not CSV or JSON, broken quoting, an unknown column, no or too many rows);
// - a dry run checks every row with instantiate's own checks (instances.ts `validateInstantiate`) and the monthly
//   cap, and writes nothing;
// - otherwise the send and all its rows are written in one transaction and answered 202; rows are checked again
//   when sent, so a row is judged by the rules at the time it goes out. A retried upload with the same
//   Idempotency-Key replays the 202; without one it is a new bulk send (every row is sent again).
import { ApiError, apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { AuthContext, ClientMeta } from '../http/request-context.js';
import { monthStart } from '../signing/open.js';
import { countDocumentsSince } from '../signing/signing.repo.js';
import { versionFields, versionSlots } from './presenters.js';
import { checkChannels } from './recipients.js';
import { validateInstantiate } from './instances.js';
import { templateOf, versionOf, type TemplatesDeps } from './templates.service.js';
import { csvColumns, csvRow, parseCsv, tooMany, type ReadRow } from './bulk-sends.csv.js';
import { doneRows, findBulkSend, findBulkSendByFormKey, insertBulkSend, type BulkRowRow } from './bulk-sends.repo.js';
import { isUniqueViolation } from '../db/db.js';
import type {
  BulkRowOut,
  BulkSendBody,
  BulkSendCreated,
  BulkSendDetail,
  DryRunOut,
  RowProblem,
} from './bulk-sends.schemas.js';
import type { VersionRow } from './templates.repo.js';
import { MAX_BULK_ROWS } from '../limits.js';

/** The upload as the route received it: CSV text (version from the query) or the JSON body. */
export type BulkUpload = { csv: string; version?: number } | { json: BulkSendBody };

/** A refused row's problems: each of a catalogue error's `meta.problems`, or the error itself. */
export function problemsOf(err: ApiError): RowProblem[] {
  const listed = err.meta?.problems;
  if (Array.isArray(listed) && listed.length > 0)
    return listed.map((p: { code?: unknown; field?: unknown; message?: unknown }) => ({
      code: String(p.code ?? err.code),
      ...(typeof p.field === 'string' ? { field: p.field } : {}),
      message: String(p.message ?? err.message),
    }));
  const field = err.meta?.field;
  return [{ code: err.code, ...(typeof field === 'string' ? { field } : {}), message: err.message }];
}

/** The rows of an upload, read against the version; a body that cannot be read as a whole is one 400. */
function readRows(upload: BulkUpload, version: VersionRow): ReadRow[] {
  if ('json' in upload) return upload.json.rows.map((input) => ({ input }));
  const records = parseCsv(upload.csv);
  const [header, ...data] = records;
  if (!header || data.length === 0)
    throw apiError('invalid_request', {
      message: 'The CSV has no data rows: a header line, then one line per instance.',
      meta: { field: 'body' },
    });
  if (data.length > MAX_BULK_ROWS) throw tooMany();
  const columns = csvColumns(header, versionSlots(version), versionFields(version));
  return data.map((cells) => csvRow(cells, columns));
}

/** Template, pinned version and rows; the plan's channel rule over every row (402 for the whole upload). */
async function prepare(deps: TemplatesDeps, auth: AuthContext, templateId: string, upload: BulkUpload) {
  const tpl = await templateOf(deps, auth, templateId, { archived: false });
  const version = await versionOf(deps, tpl, 'json' in upload ? upload.json.version : upload.version);
  const rows = readRows(upload, version);
  checkChannels(
    auth,
    rows.flatMap((r) => r.input?.recipients ?? []),
  );
  return { tpl, version, rows };
}

/** POST /v1/templates/{id}/bulk-sends?dry_run=true: every row's problems; nothing is created. */
export async function dryRunBulkSend(
  deps: TemplatesDeps,
  auth: AuthContext,
  templateId: string,
  upload: BulkUpload,
): Promise<DryRunOut> {
  const { tpl, version, rows } = await prepare(deps, auth, templateId, upload);
  const cap = deps.config.tierCaps[auth.workspace.tier];
  let room =
    cap === undefined
      ? Infinity
      : cap - (await countDocumentsSince(deps.db.kysely, auth.workspace.id, monthStart(deps.clock.now())));
  const bad: DryRunOut['dry_run']['rows'] = [];
  for (const [i, r] of rows.entries()) {
    let problems = r.problems ?? [];
    if (r.input) {
      try {
        await validateInstantiate(deps, auth, tpl.id, { ...r.input, version: version.version });
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        problems = problemsOf(err);
      }
    }
    if (problems.length === 0 && room-- <= 0) problems = [capProblem(auth.workspace.tier, cap!)];
    if (problems.length > 0) bad.push({ row: i + 1, problems });
  }
  return { dry_run: { total: rows.length, valid: rows.length - bad.length, invalid: bad.length, rows: bad } };
}

/** The problem of a row the monthly cap leaves out (the same code as instantiate's refusal). */
export const capProblem = (tier: string, cap: number): RowProblem => ({
  code: 'tier_required',
  message: `The ${tier} plan allows ${cap} documents a month; this row would pass the cap and is not sent.`,
});

/** POST /v1/templates/{id}/bulk-sends: the send and its rows written, queued for the job. */
export async function createBulkSend(
  deps: TemplatesDeps,
  auth: AuthContext,
  templateId: string,
  upload: BulkUpload,
  meta: ClientMeta,
  o: { formKey?: string } = {},
): Promise<BulkSendCreated> {
  const made = async () => {
    const b = o.formKey ? await findBulkSendByFormKey(deps.db.kysely, auth.workspace.id, o.formKey) : undefined;
    return b && { bulk_send: { id: b.id, status: b.status, total: b.total, sent: b.sent, failed: b.failed } };
  };
  const before = await made();
  if (before) return before as BulkSendCreated;
  const { tpl, version, rows } = await prepare(deps, auth, templateId, upload);
  const now = deps.clock.now();
  const id = newId('bulk');
  const failed = rows.filter((r) => !r.input).length;
  const rowRows: BulkRowRow[] = rows.map((r, i) => ({
    bulk_send_id: id,
    row: i + 1,
    input: r.input ? JSON.stringify(r.input) : null,
    status: r.input ? 'pending' : 'failed',
    template_instance_id: null,
    problems: r.input ? null : JSON.stringify(r.problems ?? []),
    attempts: 0,
    updated_at: now,
  }));
  const send = {
    id,
    workspace_id: auth.workspace.id,
    template_id: tpl.id,
    template_version: version.version,
    status: 'queued',
    total: rows.length,
    sent: 0,
    failed,
    created_by_key_id: auth.keyId,
    created_by: auth.actor ?? null,
    form_key: o.formKey ?? null,
    client_meta: JSON.stringify(meta),
    claimed_by: null,
    claim_expires_at: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
  try {
    await insertBulkSend(deps.db.kysely, send, rowRows);
  } catch (err) {
    // The same form posted twice at once: the first insert won; answer with its send.
    const raced = isUniqueViolation(err) ? await made() : undefined;
    if (raced) return raced as BulkSendCreated;
    throw err;
  }
  // After the commit: an in-process worker starts now rather than at its next poll (and closes a send whose every
  // row failed on reading).
  deps.wake.bulkSends();
  return { bulk_send: { id, status: 'queued', total: rows.length, sent: 0, failed } };
}

/** GET /v1/bulk-sends/{id}: the counters and every row that has its outcome. */
export async function getBulkSend(deps: TemplatesDeps, auth: AuthContext, id: string): Promise<BulkSendDetail> {
  const send = await findBulkSend(deps.db.kysely, auth.workspace.id, id);
  if (!send) throw apiError('not_found', { message: 'No such bulk send.' });
  const rows: BulkRowOut[] = (await doneRows(deps.db.kysely, id)).map((r) => ({
    row: r.row,
    status: r.status as BulkRowOut['status'],
    ...(r.template_instance_id ? { template_instance_id: r.template_instance_id } : {}),
    ...(r.problems ? { problems: JSON.parse(r.problems) as RowProblem[] } : {}),
  }));
  return {
    bulk_send: {
      id: send.id,
      status: send.status as BulkSendDetail['bulk_send']['status'],
      total: send.total,
      sent: send.sent,
      failed: send.failed,
      rows,
    },
  };
}
