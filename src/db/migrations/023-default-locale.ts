import type { Kysely } from 'kysely';

// Issue 27, the workspace's default language: what a signing request, an instance or a send takes when it names no
// `locale` (a known tag; null: English, as before). Additive only.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('default_locale', 'text').execute();
}
