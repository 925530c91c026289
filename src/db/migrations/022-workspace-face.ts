import type { Kysely } from 'kysely';

// Issue 27, the workspace's own face. Additive only: an accent colour (`#rrggbb`, null: Signet's own), a logo (a blob
// key, named `*_blob` like every blob reference so backups and the orphan check see it, with its media type), and the
// hosting region the deployment was told (SIGNET_REGION) when the workspace was created (null: none).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('brand_color', 'text').execute();
  await db.schema.alterTable('workspaces').addColumn('logo_blob', 'text').execute();
  await db.schema.alterTable('workspaces').addColumn('logo_type', 'text').execute();
  await db.schema.alterTable('workspaces').addColumn('region', 'text').execute();
}
