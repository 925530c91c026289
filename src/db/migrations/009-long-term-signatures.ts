import type { Kysely } from 'kysely';

// Long-term signatures (issue 21): the PAdES level a seal reached and why not more (pades_note), the hash of the
// seal's own revision (every later copy of the file starts with those bytes, so a verifier finds the document from
// any of them), and the renewal job's due time, the last timestamp's algorithms (for weakening ones) and lease. Older rows keep nulls: they were sealed B-T.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('documents').addColumn('pades_level', 'text').execute();
  await db.schema.alterTable('documents').addColumn('pades_note', 'text').execute();
  await db.schema.alterTable('documents').addColumn('seal_revision_sha256', 'text').execute();
  await db.schema.alterTable('documents').addColumn('ltv_renew_at', 'bigint').execute();
  await db.schema.alterTable('documents').addColumn('ltv_algorithms', 'text').execute();
  await db.schema.alterTable('documents').addColumn('ltv_claimed_by', 'text').execute();
  await db.schema.alterTable('documents').addColumn('ltv_claim_expires_at', 'bigint').execute();
  await db.schema.createIndex('documents_seal_revision').on('documents').column('seal_revision_sha256').execute();
  await db.schema.createIndex('documents_signed_sha256').on('documents').column('signed_sha256').execute();
  await db.schema.createIndex('documents_ltv_renew_at').on('documents').column('ltv_renew_at').execute();
}
