// Templates in the dashboard: the list, a version's page, archive, using a template and the staged instances
// waiting for review. Every read and change is the API's own service called as the signed-in person (actingAs), so
// the dashboard and the API cannot drift; the workspace scoping is theirs too (another workspace's id is 404).
import { iso } from '../lib/clock.js';
import type { ClientMeta } from '../http/request-context.js';
import { csvColumns, csvRow } from '../templates/bulk-sends.csv.js';
import { instantiate } from '../templates/instances.js';
import { instanceRecipients } from '../templates/presenters.js';
import { confirmInstance, discardInstance } from '../templates/staging.js';
import { lastUsedOf, stagedInstancesOf } from '../templates/templates.repo.js';
import { SENDER_SLOT, type TemplateFieldOut } from '../templates/templates.schemas.js';
import { deleteTemplate, getTemplate, getVersion, listWorkspaceTemplates } from '../templates/templates.service.js';
import { invalid } from '../signing/signing.service.js';
import { canManage, requireManager, type DashboardDeps } from './dashboard.service.js';
import { actingAs, actingAsSender, type Viewer } from './people.service.js';
import type { Form } from './render.js';

export const REVIEWS_PAGE_SIZE = 100;

/** The workspace's templates, newest first; archived ones too when asked. */
export async function templateList(deps: DashboardDeps, v: Viewer, q: Form) {
  const archived = q.archived === '1';
  const list = await listWorkspaceTemplates(deps, v.workspace.id, { archived, limit: 200 });
  const used = await lastUsedOf(
    deps.db.kysely,
    v.workspace.id,
    list.map((t) => t.id),
  );
  return {
    archived,
    canManage: canManage(v),
    templates: list.map((t) => ({
      id: t.id,
      name: t.name,
      version: t.current_version,
      archivedAt: t.archived_at,
      lastUsed: used.has(t.id) ? iso(used.get(t.id)!) : null,
    })),
  };
}

/** A field's rules in words the page shows (the API's names: required, pattern, max length, options…). */
const rulesOf = (f: TemplateFieldOut) => ({
  required: f.required,
  readonly: f.readonly,
  pattern: f.pattern ?? null,
  maxLength: f.max_length ?? null,
  min: f.min ?? null,
  max: f.max ?? null,
  options: f.options ?? null,
  default: f.default === undefined ? null : String(f.default),
});

/** A version of a template of the workspace (the current one without `n`), grouped as its page shows it. */
export async function versionPage(deps: DashboardDeps, v: Viewer, id: string, n?: number) {
  const auth = actingAs(v);
  const tpl = await getTemplate(deps, auth, id);
  const version = await getVersion(deps, auth, id, n ?? tpl.current_version);
  const field = (f: TemplateFieldOut) => ({ ...f, rules: rulesOf(f) });
  return {
    tpl,
    version,
    versions: Array.from({ length: tpl.current_version }, (_, i) => tpl.current_version - i),
    isCurrent: version.version === tpl.current_version,
    senderFields: version.fields.filter((f) => f.slot === SENDER_SLOT).map(field),
    slots: version.slots.map((s) => ({ ...s, fields: version.fields.filter((f) => f.slot === s.name).map(field) })),
    canManage: canManage(v),
  };
}

export async function archivePage(deps: DashboardDeps, v: Viewer, id: string) {
  requireManager(v);
  return getTemplate(deps, actingAs(v), id);
}

/** Archives (the API's DELETE): new instances are refused, reads and existing instances keep working. */
export async function archive(deps: DashboardDeps, v: Viewer, id: string): Promise<void> {
  requireManager(v);
  await deleteTemplate(deps, actingAs(v), id);
}

/** What the "use" form asks for: each slot's person, and the sender's fields with their rules as HTML constraints. */
export async function useForm(deps: DashboardDeps, v: Viewer, id: string) {
  const tpl = await getTemplate(deps, actingAs(v), id);
  if (tpl.archived_at !== null) throw invalid('template', 'This template was archived.');
  const senderFields = tpl.fields
    .filter((f) => f.slot === SENDER_SLOT && !f.readonly)
    .map((f) => ({
      key: f.key,
      label: f.label ?? f.key,
      type: f.type,
      required: f.required,
      input: INPUT_TYPE[f.type] ?? 'text',
      pattern: f.pattern ?? null,
      maxLength: f.max_length ?? null,
      min: f.min ?? null,
      max: f.max ?? null,
      options: f.options ?? null,
      default: f.default === undefined ? '' : String(f.default),
    }));
  // No "review first" box where staging is switched off (SIGNET_REVIEW_STAGING=0): it could only be refused.
  return { tpl, senderFields, slots: tpl.slots, reviewStaging: deps.config.reviewStaging };
}

const INPUT_TYPE: Record<string, string> = { number: 'number', date: 'date', email: 'email', checkbox: 'checkbox' };

/**
 * Instantiates the template as the person: the form's `<slot>.name|email|phone` and field keys are read the way a
 * bulk-send CSV row is (one reader of "a row of values"), then instantiate makes every check the API makes.
 */
export async function useTemplate(deps: DashboardDeps, v: Viewer, id: string, form: Form, meta: ClientMeta) {
  const auth = await actingAsSender(deps.db, v);
  const tpl = await getTemplate(deps, auth, id);
  const header = [
    ...tpl.slots.flatMap((s) => [`${s.name}.name`, `${s.name}.email`, `${s.name}.phone`]),
    ...tpl.fields.filter((f) => f.slot === SENDER_SLOT && !f.readonly).map((f) => f.key),
  ];
  const row = csvRow(
    header.map((k) => form[k] ?? ''),
    csvColumns(header, tpl.slots, tpl.fields),
  );
  if (!row.input) throw invalid(row.problems?.[0]?.field ?? 'body', row.problems?.[0]?.message ?? 'Invalid values.');
  const title = (form.title ?? '').trim();
  const message = (form.message ?? '').trim();
  const created = await instantiate(
    deps,
    auth,
    id,
    {
      ...row.input,
      version: tpl.current_version,
      review: form.review === 'on',
      ...(title ? { title } : {}),
      ...(message ? { message } : {}),
    },
    meta,
  );
  return created.template_instance;
}

/** The workspace's staged instances, soonest deadline first; those past it can no longer be confirmed. */
export async function reviewList(deps: DashboardDeps, v: Viewer) {
  const now = deps.clock.now();
  const rows = await stagedInstancesOf(deps.db.kysely, v.workspace.id, REVIEWS_PAGE_SIZE);
  return rows.map((r) => ({
    id: r.id,
    templateId: r.template_id,
    templateName: r.template_name,
    version: r.template_version,
    documentId: r.document_id,
    title: r.title,
    recipients: instanceRecipients({ recipients: r.recipients } as never).map((x) => x.email || x.phone || x.name),
    deadline: r.review_expires_at === null ? null : iso(r.review_expires_at),
    expired: r.review_expires_at !== null && r.review_expires_at <= now,
  }));
}

/** Confirm or discard a staged instance of the workspace as the person (staging.ts: its states and events). */
export const confirmReview = (deps: DashboardDeps, v: Viewer, id: string) =>
  confirmInstance(deps, { auth: actingAs(v) }, id);

export const discardReview = (deps: DashboardDeps, v: Viewer, id: string) =>
  discardInstance(deps, { auth: actingAs(v) }, id);
