import type { Kysely } from 'kysely';
import type { Database, WorkspacesTable } from '../db/schema.js';
import { forUpdate, isUniqueViolation, type Db } from '../db/db.js';
import { newId } from '../lib/ids.js';
import { randomHex } from '../lib/crypto.js';

export type Workspace = WorkspacesTable;

export const slugify = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48) || 'workspace';

/**
 * Creates a workspace with a unique slug (a short suffix is added when the plain slug is taken). `region` is the
 * deployment's SIGNET_REGION at this moment, recorded for good; it is written only when set, so a schema before
 * migration 022 still takes workspaces without one.
 */
export async function createWorkspace(
  db: Kysely<Database>,
  input: { name: string; tier: string; replyTo?: string | null; region?: string | null },
  now: number,
): Promise<Workspace> {
  const base = slugify(input.name);
  for (let i = 0; i < 5; i++) {
    const row: Workspace = {
      id: newId('ws'),
      name: input.name,
      slug: i === 0 ? base : `${base}-${randomHex(3)}`,
      tier: input.tier,
      reply_to: input.replyTo ?? null,
      created_at: now,
      ...(input.region ? { region: input.region } : {}),
    };
    try {
      await db.insertInto('workspaces').values(row).execute();
      return row;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  throw new Error('could not find a free slug');
}

export const findWorkspace = (db: Kysely<Database>, id: string) =>
  db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();

/** The workspace's row, locked for the rest of `trx` where the database locks rows (two logo changes at once must
 * each see the other's blob, so neither is left unreferenced). */
export const findWorkspaceForUpdate = (db: Db, trx: Kysely<Database>, id: string) =>
  forUpdate(db, trx.selectFrom('workspaces').selectAll().where('id', '=', id)).executeTakeFirst();

/** A workspace's default reminder policy (migration 012); null: none set, or a schema without the columns. */
export async function workspaceReminderDefault(db: Kysely<Database>, id: string) {
  const w = await findWorkspace(db, id);
  const after = w?.reminder_after_days;
  const every = w?.reminder_every_days;
  return after != null && every != null ? { after_days: Number(after), every_days: Number(every) } : null;
}

/** Sets (or, with null, clears) the default reminder policy; run by workspaces/settings.service.ts only. */
export async function setWorkspaceReminderDefault(
  db: Kysely<Database>,
  id: string,
  policy: { after_days: number; every_days: number } | null,
): Promise<boolean> {
  const r = await db
    .updateTable('workspaces')
    .set({ reminder_after_days: policy?.after_days ?? null, reminder_every_days: policy?.every_days ?? null })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Sets (or, with null, clears) the retention of ended documents, in days; run by settings.service.ts only. */
export async function setWorkspaceRetention(
  db: Kysely<Database>,
  workspaceId: string,
  days: number | null,
): Promise<boolean> {
  const r = await db
    .updateTable('workspaces')
    .set({ retention_days: days })
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Sets the workspace's default language (migration 023; null: English); false when there is no such workspace. */
export async function setWorkspaceDefaultLocale(
  db: Kysely<Database>,
  workspaceId: string,
  locale: string | null,
): Promise<boolean> {
  const r = await db
    .updateTable('workspaces')
    .set({ default_locale: locale })
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Renames the workspace (the slug stays: links and scripts may name it); run by settings.service.ts only. */
export async function setWorkspaceName(db: Kysely<Database>, id: string, name: string): Promise<boolean> {
  const r = await db.updateTable('workspaces').set({ name }).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Sets (or, with null, clears) the Reply-To of the workspace's mail; run by settings.service.ts only. */
export async function setWorkspaceReplyTo(db: Kysely<Database>, id: string, replyTo: string | null): Promise<boolean> {
  const r = await db.updateTable('workspaces').set({ reply_to: replyTo }).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Sets (or, with null, clears) the accent colour `#rrggbb`; run by settings.service.ts only. */
export async function setWorkspaceBrandColor(db: Kysely<Database>, id: string, color: string | null): Promise<boolean> {
  const r = await db.updateTable('workspaces').set({ brand_color: color }).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Points the workspace at a new logo blob (or, with null, none); run by settings.service.ts only. */
export async function setWorkspaceLogo(
  db: Kysely<Database>,
  id: string,
  logo: { blob: string; type: 'image/png' | 'image/jpeg' } | null,
): Promise<boolean> {
  const r = await db
    .updateTable('workspaces')
    .set({ logo_blob: logo?.blob ?? null, logo_type: logo?.type ?? null })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
