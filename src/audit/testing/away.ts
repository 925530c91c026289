// A real fault for the operator audit log: its table is renamed away while `fn` runs, so every insert fails in the
// database itself (no mock). A test then sees whether the action that wanted the row happened anyway.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export async function withAuditLogAway<T>(db: Kysely<Database>, fn: () => Promise<T>): Promise<T> {
  await db.schema.alterTable('audit_log').renameTo('audit_log_away').execute();
  try {
    return await fn();
  } finally {
    await db.schema.alterTable('audit_log_away').renameTo('audit_log').execute();
  }
}
