// Row buffers of the seeder: one column list per table (every column a seeded row sets, in schema order), rows
// pushed as typed objects, handed to the bulk writer as arrays. Typed by schema.ts, so a renamed column fails tsc.
import type { Insertable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Batch, SeedTable } from './seed.repo.js';

export type Row<T extends SeedTable> = Insertable<Database[T]>;

export const COLUMNS = {
  workspaces: ['id', 'name', 'slug', 'tier', 'reply_to', 'created_at'],
  api_keys: [
    'id',
    'workspace_id',
    'label',
    'key_hash',
    'legacy',
    'created_at',
    'revoked_at',
    'revoked_by',
    'allowed_ips',
    'allowed_origins',
  ],
  templates: ['id', 'workspace_id', 'name', 'current_version', 'archived_at', 'created_at', 'updated_at'],
  template_versions: [
    'template_id',
    'version',
    'file_name',
    'page_count',
    'original_sha256',
    'original_blob',
    'prepared_sha256',
    'prepared_blob',
    'slots',
    'fields',
    'created_by_key_id',
    'created_at',
  ],
  users: ['id', 'email', 'password_hash', 'created_at'],
  workspace_members: ['workspace_id', 'user_id', 'role', 'created_by', 'created_at'],
  documents: [
    'id',
    'workspace_id',
    'title',
    'message',
    'locale',
    'status',
    'signing_order',
    'placement',
    'file_name',
    'page_count',
    'fields',
    'original_sha256',
    'original_blob',
    'prepared_sha256',
    'prepared_blob',
    'signed_blob',
    'signed_sha256',
    'cert_serial',
    'tsa_provider',
    'tsa_signed_at',
    'callback_hook_id',
    'created_by_key_id',
    'seal_state',
    'seal_attempts',
    'final_request_id',
    'expires_at',
    'created_at',
    'updated_at',
    'completed_at',
    'closed_at',
    'template_id',
    'template_version',
    'pades_level',
    'reminder_after_days',
    'reminder_every_days',
  ],
  signing_requests: [
    'id',
    'document_id',
    'workspace_id',
    'slot',
    'role',
    'email',
    'name',
    'status',
    'token_hash',
    'expires_at',
    'sent_at',
    'released_at',
    'viewed_at',
    'signed_at',
    'declined_at',
    'decline_reason',
    'closed_at',
    'signature_kind',
    'signature_text',
    'view_ip',
    'view_ua',
    'sign_ip',
    'sign_ua',
    'reminded_at',
    'created_at',
    'updated_at',
    'next_reminder_at',
    'reminders_sent',
    'expiry_warned_at',
  ],
  audit_events: [
    'document_id',
    'workspace_id',
    'seq',
    'action',
    'actor',
    'signing_request_id',
    'ip',
    'user_agent',
    'detail',
    'at',
    'prev_hash',
    'hash',
  ],
  hooks: ['id', 'workspace_id', 'target_url', 'events', 'secret', 'document_id', 'source', 'created_at', 'deleted_at'],
  events: ['id', 'workspace_id', 'name', 'document_id', 'body', 'created_at'],
  deliveries: [
    'id',
    'event_id',
    'hook_id',
    'workspace_id',
    'status',
    'attempts',
    'next_attempt_at',
    'last_status_code',
    'last_error',
    'created_at',
    'updated_at',
  ],
  delivery_attempts: [
    'delivery_id',
    'attempt',
    'started_at',
    'duration_ms',
    'status_code',
    'response_body',
    'error',
    'worker',
  ],
  mail_outbox: [
    'id',
    'workspace_id',
    'document_id',
    'signing_request_id',
    'template',
    'locale',
    'to_email',
    'to_name',
    'from_name',
    'reply_to',
    'subject',
    'text',
    'html',
    'status',
    'attempts',
    'next_attempt_at',
    'last_error',
    'message_id',
    'created_at',
    'updated_at',
    'sent_at',
  ],
  template_instances: [
    'id',
    'workspace_id',
    'template_id',
    'template_version',
    'kind',
    'status',
    'document_id',
    'recipients',
    'field_values',
    'review_token_hash',
    'review_expires_at',
    'staged_at',
    'confirmed_at',
    'confirmed_by',
    'discarded_at',
    'discard_reason',
    'created_by_key_id',
    'created_at',
    'updated_at',
  ],
  key_uses: ['key_id', 'workspace_id', 'at', 'ip_masked', 'method', 'route', 'status'],
} as const satisfies { [T in SeedTable]?: readonly (keyof Database[T] & string)[] };

export type BufferedTable = keyof typeof COLUMNS;
/** Insert order: a row's references are written before it. */
export const TABLE_ORDER: readonly BufferedTable[] = [
  'workspaces',
  'api_keys',
  'templates',
  'template_versions',
  'users',
  'workspace_members',
  'hooks',
  'documents',
  'signing_requests',
  'audit_events',
  'template_instances',
  'events',
  'deliveries',
  'delivery_attempts',
  'mail_outbox',
  'key_uses',
];

export class RowBuffer {
  private rows = new Map<BufferedTable, unknown[][]>();
  readonly counts = new Map<BufferedTable, number>();
  size = 0;

  push<T extends BufferedTable>(table: T, row: Row<T>): void {
    const r = row as Record<string, unknown>;
    const values = COLUMNS[table].map((c) => r[c] ?? null);
    let list = this.rows.get(table);
    if (!list) this.rows.set(table, (list = []));
    list.push(values);
    this.counts.set(table, (this.counts.get(table) ?? 0) + 1);
    this.size++;
  }

  /**
   * The buffered rows in insert order; the buffer is empty afterwards. Each batch is sorted by its first column
   * (the random id, or the parent's), so a transaction fills index pages in order instead of hopping between them.
   */
  drain(): Batch[] {
    const out: Batch[] = [];
    for (const table of TABLE_ORDER) {
      const rows = this.rows.get(table);
      if (!rows?.length) continue;
      if (table !== 'key_uses') rows.sort(byFirstColumns);
      out.push({ table, columns: COLUMNS[table], rows });
    }
    this.rows.clear();
    this.size = 0;
    return out;
  }
}

// Ties (an audit chain's entries share their document) keep their order: Array.prototype.sort is stable.
const byFirstColumns = (a: unknown[], b: unknown[]) => {
  const x = a[0] as string;
  const y = b[0] as string;
  return x < y ? -1 : x > y ? 1 : 0;
};
