// All SQL of templates, their versions and instances. Versions are insert-only (an immutable snapshot each); an
// instance's status changes only through `moveInstance`, a guarded update ("… WHERE status IN (from)").
import type { Kysely } from 'kysely';
import type { Database, TemplateInstancesTable, TemplatesTable, TemplateVersionsTable } from '../db/schema.js';
import { INSTANCE_MOVES, type InstanceKind, type InstanceMove, type InstanceStatus } from './states.js';

type Trx = Kysely<Database>;
export type TemplateRow = TemplatesTable;
export type VersionRow = TemplateVersionsTable;
export type InstanceRow = Omit<TemplateInstancesTable, 'status' | 'kind'> & {
  status: InstanceStatus;
  kind: InstanceKind;
};

export async function insertTemplate(trx: Trx, t: TemplateRow, v: VersionRow): Promise<void> {
  await trx.insertInto('templates').values(t).execute();
  await trx.insertInto('template_versions').values(v).execute();
}

/**
 * Publishes version n+1: the new row and the template's pointer in one transaction. The pointer moves only from the
 * version the caller read, so two concurrent publishes cannot both take n+1 (the loser's insert hits the key).
 */
export async function insertVersion(trx: Trx, v: VersionRow, now: number): Promise<boolean> {
  const r = await trx
    .updateTable('templates')
    .set({ current_version: v.version, updated_at: now })
    .where('id', '=', v.template_id)
    .where('current_version', '=', v.version - 1)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) return false;
  await trx.insertInto('template_versions').values(v).execute();
  return true;
}

export const findTemplate = (db: Trx, workspaceId: string, id: string) =>
  db
    .selectFrom('templates')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();

export const findTemplateById = (db: Trx, id: string) =>
  db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirst();

export const findVersion = (db: Trx, templateId: string, version: number) =>
  db
    .selectFrom('template_versions')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('version', '=', version)
    .executeTakeFirst();

/** The workspace's templates, newest first, each with its current version (archived ones only when asked). */
export async function listTemplates(
  db: Trx,
  workspaceId: string,
  o: { archived?: boolean; limit: number },
): Promise<{ template: TemplateRow; version: VersionRow }[]> {
  let q = db
    .selectFrom('templates as t')
    .innerJoin('template_versions as v', (j) =>
      j.onRef('v.template_id', '=', 't.id').onRef('v.version', '=', 't.current_version'),
    )
    .selectAll('v')
    .select([
      't.id',
      't.workspace_id',
      't.name',
      't.current_version',
      't.archived_at',
      't.created_at as t_created_at',
      't.updated_at',
    ])
    .where('t.workspace_id', '=', workspaceId);
  if (!o.archived) q = q.where('t.archived_at', 'is', null);
  const rows = await q.orderBy('t.created_at', 'desc').orderBy('t.id').limit(o.limit).execute();
  return rows.map((r) => ({
    template: {
      id: r.id,
      workspace_id: r.workspace_id,
      name: r.name,
      current_version: r.current_version,
      archived_at: r.archived_at,
      created_at: r.t_created_at,
      updated_at: r.updated_at,
    },
    version: {
      template_id: r.template_id,
      version: r.version,
      file_name: r.file_name,
      page_count: r.page_count,
      original_sha256: r.original_sha256,
      original_blob: r.original_blob,
      prepared_sha256: r.prepared_sha256,
      prepared_blob: r.prepared_blob,
      slots: r.slots,
      fields: r.fields,
      created_by_key_id: r.created_by_key_id,
      created_at: r.created_at,
    },
  }));
}

/** true: archived now (false: it already was). */
export async function archiveTemplate(db: Trx, workspaceId: string, id: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('templates')
    .set({ archived_at: now, updated_at: now })
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('archived_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function insertInstance(trx: Trx, row: InstanceRow): Promise<void> {
  await trx.insertInto('template_instances').values(row).execute();
}

const asInstance = (r: TemplateInstancesTable | undefined) => r as InstanceRow | undefined;

export const findInstance = async (db: Trx, workspaceId: string, id: string) =>
  asInstance(
    await db
      .selectFrom('template_instances')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
  );

export const findInstanceById = async (db: Trx, id: string) =>
  asInstance(await db.selectFrom('template_instances').selectAll().where('id', '=', id).executeTakeFirst());

export const findInstanceByReviewHash = async (db: Trx, hash: string) =>
  asInstance(
    await db.selectFrom('template_instances').selectAll().where('review_token_hash', '=', hash).executeTakeFirst(),
  );

type InstancePatch = Partial<Omit<InstanceRow, 'id' | 'status'>>;

/** Makes `move`; false when the instance was not in one of its from-states (someone else moved it first). */
export async function moveInstance(trx: Trx, id: string, move: InstanceMove, patch: InstancePatch): Promise<boolean> {
  const { from, to } = INSTANCE_MOVES[move];
  const r = await trx
    .updateTable('template_instances')
    .set({ ...patch, status: to })
    .where('id', '=', id)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Staged instances whose review window has closed, oldest first. */
export const dueReviewExpiries = (db: Trx, now: number, limit: number) =>
  db
    .selectFrom('template_instances')
    .select(['id', 'document_id'])
    .where('status', '=', 'staged')
    .where('review_expires_at', '<=', now)
    .orderBy('review_expires_at')
    .limit(limit)
    .execute();

/** When each of these templates last made an instance (the dashboard's "last used"); absent: never. */
export async function lastUsedOf(db: Trx, workspaceId: string, templateIds: string[]): Promise<Map<string, number>> {
  if (templateIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('template_instances')
    .select(['template_id'])
    .select((eb) => eb.fn.max('created_at').as('last'))
    .where('workspace_id', '=', workspaceId)
    .where('template_id', 'in', templateIds)
    .groupBy('template_id')
    .execute();
  return new Map(rows.map((r) => [r.template_id, Number(r.last)]));
}

/** The workspace's staged instances, soonest review deadline first, with their template's name and document title. */
export const stagedInstancesOf = (db: Trx, workspaceId: string, limit: number) =>
  db
    .selectFrom('template_instances as i')
    .innerJoin('templates as t', 't.id', 'i.template_id')
    .innerJoin('documents as d', 'd.id', 'i.document_id')
    .select([
      'i.id',
      'i.template_id',
      'i.template_version',
      'i.document_id',
      'i.recipients',
      'i.review_expires_at',
      'i.staged_at',
      't.name as template_name',
      'd.title',
    ])
    .where('i.workspace_id', '=', workspaceId)
    .where('i.status', '=', 'staged')
    .orderBy('i.review_expires_at')
    .orderBy('i.id')
    .limit(limit)
    .execute();
