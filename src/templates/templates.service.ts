// Templates and their versions. Guarantees: a version is an immutable snapshot (PDF with its markers masked, slots,
// fields with their final boxes) and is published only when every field is placed: placement problems use the
// signing-request codes, so a broken template is never published; all PDF work runs in worker threads before the
// one transaction that writes anything; editing a template never touches a version an instance uses.
import { recordAudit } from '../audit/audit-log.repo.js';
import { sha256Hex } from '../lib/crypto.js';
import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { AuthContext } from '../http/request-context.js';
import { decodeFile } from '../signing/file-input.js';
import { invalid, type SigningDeps } from '../signing/signing.service.js';
import { inTransaction } from '../signing/transition.js';
import { checkFieldDefinitions, stampKind } from './fields.js';
import { presentTemplate, presentVersion } from './presenters.js';
import {
  archiveTemplate,
  findTemplate,
  findVersion,
  insertTemplate,
  insertVersion,
  listTemplates,
  type TemplateRow,
  type VersionRow,
} from './templates.repo.js';
import type {
  CreateTemplateBody,
  SlotOut,
  TemplateFieldIn,
  TemplateFieldOut,
  TemplateOut,
  VersionBody,
  VersionOut,
} from './templates.schemas.js';

export type TemplatesDeps = SigningDeps;

type Snapshot = Omit<VersionRow, 'template_id' | 'version' | 'created_at' | 'created_by_key_id'>;

/** The file of a version: the upload, the fetched URL, or (new versions only) the previous version's PDF. */
async function fileFor(
  deps: TemplatesDeps,
  body: VersionBody,
  previous?: VersionRow,
): Promise<{ bytes: Uint8Array; name: string }> {
  if (body.file && body.file_url) throw invalid('file', 'Give file or file_url, not both.');
  if (body.file) return { bytes: decodeFile(body.file), name: body.file.name };
  if (body.file_url) {
    const name = decodeURIComponent(new URL(body.file_url).pathname.split('/').pop() || 'template.pdf');
    return { bytes: await deps.files.fetch(body.file_url), name };
  }
  if (!previous) throw invalid('file', 'Give file or file_url.');
  return { bytes: await deps.blobs.get(previous.original_blob), name: previous.file_name };
}

/** Checks the definitions, then places every field on the PDF (worker threads); writes nothing. */
async function snapshot(deps: TemplatesDeps, body: VersionBody, previous?: VersionRow) {
  checkFieldDefinitions(body.fields, body.slots);
  const file = await fileFor(deps, body, previous);
  const info = await deps.pdf.inspect(file.bytes);
  const placed = await deps.pdf.placeTemplate(
    file.bytes,
    body.fields.map((f) => ({ key: f.key, type: stampKind(f.type), anchor: f.anchor, page: f.page, box: f.box })),
  );
  const slots: SlotOut[] = body.slots.map((s) => ({ name: s.name, signing_order: s.signing_order ?? 1 }));
  const fields = body.fields.map((f, i) => fieldOut(f, placed.fields[i]!));
  return { file, info, placed, slots, fields };
}

const fieldOut = (f: TemplateFieldIn, p: { page: number; x: number; y: number; width: number; height: number }) =>
  ({
    key: f.key,
    type: f.type,
    slot: f.slot,
    required: f.required ?? false,
    ...(f.label !== undefined ? { label: f.label } : {}),
    ...(f.options !== undefined ? { options: f.options } : {}),
    ...(f.pattern !== undefined ? { pattern: f.pattern } : {}),
    ...(f.min !== undefined ? { min: f.min } : {}),
    ...(f.max !== undefined ? { max: f.max } : {}),
    ...(f.max_length !== undefined ? { max_length: f.max_length } : {}),
    ...(f.default !== undefined ? { default: f.default } : {}),
    readonly: f.readonly ?? false,
    ...(f.anchor !== undefined ? { anchor: f.anchor } : {}),
    page: p.page,
    box: { x: p.x, y: p.y, width: p.width, height: p.height },
  }) satisfies TemplateFieldOut;

async function versionRow(
  deps: TemplatesDeps,
  trx: Parameters<Parameters<typeof inTransaction>[1]>[0]['trx'],
  s: Awaited<ReturnType<typeof snapshot>>,
): Promise<Snapshot> {
  return {
    file_name: s.file.name.slice(0, 255),
    page_count: s.placed.pageCount,
    original_sha256: s.info.sha256,
    original_blob: await deps.blobs.put(s.file.bytes, 'original', trx),
    prepared_sha256: sha256Hex(s.placed.pdf),
    prepared_blob: await deps.blobs.put(s.placed.pdf, 'prepared', trx),
    slots: JSON.stringify(s.slots),
    fields: JSON.stringify(s.fields),
  };
}

export async function createTemplate(
  deps: TemplatesDeps,
  auth: AuthContext,
  body: CreateTemplateBody,
): Promise<TemplateOut> {
  const s = await snapshot(deps, body);
  const id = newId('tpl');
  return inTransaction(deps, async (tx) => {
    const tpl: TemplateRow = {
      id,
      workspace_id: auth.workspace.id,
      name: body.name.trim() || 'Untitled template',
      current_version: 1,
      archived_at: null,
      created_at: tx.now,
      updated_at: tx.now,
    };
    const v: VersionRow = {
      template_id: id,
      version: 1,
      created_by_key_id: auth.keyId,
      created_at: tx.now,
      ...(await versionRow(deps, tx.trx, s)),
    };
    await insertTemplate(tx.trx, tpl, v);
    await operatorAudit(tx.trx, auth, 'template.created', id, { version: 1 }, tx.now);
    return presentTemplate(tpl, v);
  });
}

/** A template of this workspace; archived ones too when `archived` (reads and existing instances keep working). */
export async function templateOf(deps: TemplatesDeps, auth: AuthContext, id: string, o: { archived: boolean }) {
  const tpl = await findTemplate(deps.db.kysely, auth.workspace.id, id);
  if (!tpl || (tpl.archived_at !== null && !o.archived))
    throw apiError('not_found', { message: tpl ? 'This template was archived.' : 'No such template.' });
  return tpl;
}

/** The pinned version, or the current one; a version number with no snapshot is 404 version_not_found. */
export async function versionOf(deps: TemplatesDeps, tpl: TemplateRow, version?: number): Promise<VersionRow> {
  const v = await findVersion(deps.db.kysely, tpl.id, version ?? tpl.current_version);
  if (!v)
    throw apiError('version_not_found', {
      message: `Template ${tpl.id} has no version ${version}; its current version is ${tpl.current_version}.`,
      meta: { version, current_version: tpl.current_version },
    });
  return v;
}

export async function publishVersion(
  deps: TemplatesDeps,
  auth: AuthContext,
  id: string,
  body: VersionBody,
): Promise<TemplateOut> {
  const tpl = await templateOf(deps, auth, id, { archived: false });
  const previous = await versionOf(deps, tpl);
  const s = await snapshot(deps, body, previous);
  // Two publishes at once: the loser's pointer move finds the version taken and takes the next number instead.
  for (;;) {
    const out = await inTransaction(deps, async (tx) => {
      const current = (await findTemplate(tx.trx, auth.workspace.id, id))!;
      const v: VersionRow = {
        template_id: id,
        version: current.current_version + 1,
        created_by_key_id: auth.keyId,
        created_at: tx.now,
        ...(await versionRow(deps, tx.trx, s)),
      };
      if (!(await insertVersion(tx.trx, v, tx.now))) return null;
      await operatorAudit(tx.trx, auth, 'template.version_published', id, { version: v.version }, tx.now);
      return presentTemplate({ ...current, current_version: v.version, updated_at: tx.now }, v);
    });
    if (out) return out;
  }
}

export async function getTemplate(deps: TemplatesDeps, auth: AuthContext, id: string): Promise<TemplateOut> {
  const tpl = await templateOf(deps, auth, id, { archived: true });
  return presentTemplate(tpl, await versionOf(deps, tpl));
}

export async function getVersion(deps: TemplatesDeps, auth: AuthContext, id: string, n: number): Promise<VersionOut> {
  const tpl = await templateOf(deps, auth, id, { archived: true });
  return presentVersion(await versionOf(deps, tpl, n));
}

export async function listWorkspaceTemplates(
  deps: Pick<TemplatesDeps, 'db'>,
  workspaceId: string,
  o: { archived?: boolean; limit?: number } = {},
): Promise<TemplateOut[]> {
  const rows = await listTemplates(deps.db.kysely, workspaceId, { archived: o.archived, limit: o.limit ?? 100 });
  return rows.map((r) => presentTemplate(r.template, r.version));
}

export async function deleteTemplate(deps: TemplatesDeps, auth: AuthContext, id: string): Promise<void> {
  await templateOf(deps, auth, id, { archived: true });
  await inTransaction(deps, async (tx) => {
    if (await archiveTemplate(tx.trx, auth.workspace.id, id, tx.now))
      await operatorAudit(tx.trx, auth, 'template.archived', id, undefined, tx.now);
  });
}

/** The operator audit row of a dashboard person's change (`auth.actor`); an API key's calls write none. */
async function operatorAudit(
  trx: Parameters<typeof recordAudit>[0],
  auth: AuthContext,
  action: string,
  targetId: string,
  detail: unknown,
  now: number,
): Promise<void> {
  if (auth.keyId === null && auth.actor)
    await recordAudit(trx, { workspaceId: auth.workspace.id, actor: auth.actor, action, targetId, detail }, now);
}
