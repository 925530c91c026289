// Row types of every table. Timestamps are integer milliseconds since the epoch; lists and objects are JSON text.
import type { Generated } from 'kysely';
import type {
  DashboardDraftsTable,
  DashboardSessionsTable,
  KeyUsesTable,
  UserTokensTable,
  UsersTable,
  WorkspaceMembersTable,
} from './schema-people.js';
import type { QesCeremoniesTable, SignerCodesTable } from './schema-verification.js';
import type { BulkSendRowsTable, BulkSendsTable } from './schema-bulk.js';
import type { BlobDeletionsTable, DocumentTombstonesTable } from './schema-purge.js';

export type * from './schema-people.js';
export type * from './schema-verification.js';
export type * from './schema-bulk.js';
export type * from './schema-purge.js';

export type WorkspacesTable = {
  id: string;
  name: string;
  slug: string;
  tier: string;
  reply_to: string | null;
  created_at: number;
} & ReminderPolicyColumns &
  /** Migration 021: ended documents are purged this many days after they ended; null keeps them. */
  Optional<'retention_days', number> &
  /** Migration 022: accent colour `#rrggbb`, logo blob and its media type, hosting region (null: none of each). */
  Optional<'brand_color' | 'logo_blob' | 'logo_type' | 'region', string> &
  /** Migration 023: the language of what names none (a known locale tag; null: English). */
  Optional<'default_locale', string>;
/** A reminder policy (migration 012): both null means no automatic reminders. */
type ReminderPolicyColumns = Optional<'reminder_after_days' | 'reminder_every_days', number>;

export type ApiKeysTable = {
  id: string;
  workspace_id: string;
  label: string;
  key_hash: string;
  legacy: number;
  created_at: number;
  last_used_at: number | null;
  last_used_ip: string | null;
  revoked_at: number | null;
  revoked_by: string | null;
  rate_limit: number | null;
  allowed_ips: string;
  allowed_origins: string;
};

export type AuditLogTable = {
  id: Generated<number>;
  workspace_id: string;
  actor: string;
  action: string;
  target_id: string | null;
  detail: string | null;
  created_at: number;
};

export type HooksTable = {
  id: string;
  workspace_id: string;
  target_url: string;
  events: string;
  secret: string;
  document_id: string | null;
  source: string;
  created_at: number;
  deleted_at: number | null;
};

export type EventsTable = {
  id: string;
  workspace_id: string;
  name: string;
  document_id: string | null;
  body: string;
  created_at: number;
};

export type DeliveriesTable = {
  id: string;
  event_id: string;
  hook_id: string;
  workspace_id: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
};

/** An open delivery's due time, attempt count and lease (migration 028), written with it; goes when it settles. */
export type DeliveryQueueTable = {
  id: string;
  next_attempt_at: number;
  attempts: number;
  claimed_by: string | null;
  claim_expires_at: number | null;
};

export type DeliveryAttemptsTable = {
  id: Generated<number>;
  delivery_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  worker: string;
};

export type IdempotencyKeysTable = {
  key_id: string;
  idem_key: string;
  fingerprint: string;
  state: string;
  status_code: number | null;
  response_body: string | null;
  content_type: string | null;
  created_at: number;
  locked_until: number;
};

export type JobRunsTable = {
  name: string;
  slot: number;
  claimed_by: string;
  started_at: number;
  finished_at: number | null;
  result: string | null;
};

export type MailOutboxTable = {
  id: string;
  workspace_id: string;
  document_id: string | null;
  signing_request_id: string | null;
  template: string;
  locale: string;
  to_email: string;
  to_name: string;
  from_name: string;
  reply_to: string | null;
  subject: string;
  text: string;
  html: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  claimed_by: string | null;
  claim_expires_at: number | null;
  last_error: string | null;
  message_id: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
};

export type DocumentsTable = {
  id: string;
  workspace_id: string;
  title: string;
  message: string | null;
  locale: string;
  status: string;
  signing_order: string;
  placement: string;
  file_name: string;
  page_count: number;
  fields: string;
  original_sha256: string;
  original_blob: string;
  prepared_sha256: string;
  prepared_blob: string;
  signed_blob: string | null;
  signed_sha256: string | null;
  cert_serial: string | null;
  tsa_provider: string | null;
  tsa_signed_at: string | null;
  callback_hook_id: string | null;
  created_by_key_id: string | null;
  seal_state: string;
  seal_claimed_by: string | null;
  seal_claim_expires_at: number | null;
  seal_attempts: number;
  seal_last_error: string | null;
  final_request_id: string | null;
  expires_at: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  closed_at: number | null;
} & Optional<'template_id', string> &
  Optional<'template_version' | 'ltv_renew_at' | 'ltv_claim_expires_at', number> &
  Optional<'pades_level' | 'pades_note' | 'seal_revision_sha256' | 'ltv_algorithms' | 'ltv_claimed_by', string> &
  ReminderPolicyColumns &
  /** Migration 013: `qes` or null (ses); the document after its last qualified signer; the per-document QES lock. */
  Optional<'signature_level' | 'qes_blob' | 'qes_sha256' | 'qes_lock_request_id', string> &
  Optional<'qes_lock_until', number>;
// Later migrations' columns (005 templates, 009 long-term signatures), optional: older code paths never write them.
type Optional<K extends string, T> = { [P in K]?: T | null };

export type SigningRequestsTable = {
  id: string;
  document_id: string;
  workspace_id: string;
  slot: number;
  role: string;
  email: string;
  name: string;
  status: string;
  token_hash: string;
  expires_at: number;
  sent_at: number | null;
  released_at: number | null;
  viewed_at: number | null;
  signed_at: number | null;
  declined_at: number | null;
  decline_reason: string | null;
  closed_at: number | null;
  signature_kind: string | null;
  signature_text: string | null;
  signature_blob: string | null;
  field_values: string | null;
  view_ip: string | null;
  view_ua: string | null;
  sign_ip: string | null;
  sign_ua: string | null;
  reminded_at: number | null;
  created_at: number;
  updated_at: number;
  /** Template recipients only (migration 005): null means e-mail, the request's slot order, no phone. */
  channel?: string | null;
  phone?: string | null;
  routing_order?: number | null;
  /** Migration 011: `email_code` or `sms_code` (null: none), and when the signer passed it. */
  verification?: string | null;
  verified_at?: number | null;
  /** Migration 013: JSON record of the qualified signature (provider, certificate), null for a simple one. */
  qes?: string | null;
} & SignerReminderColumns;
/** Migration 012: the next automatic reminder (null: none due), how many were sent, when the expiry warning went. */
type SignerReminderColumns = Optional<'next_reminder_at' | 'reminders_sent' | 'expiry_warned_at', number>;

export type AuditEventsTable = {
  id: Generated<number>;
  document_id: string;
  workspace_id: string;
  seq: number;
  action: string;
  actor: string;
  signing_request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  detail: string | null;
  at: number;
  prev_hash: string;
  hash: string;
};

export type BlobsTable = {
  key: string;
  data: Uint8Array;
  size: number;
  created_at: number;
};

export type TemplatesTable = {
  id: string;
  workspace_id: string;
  name: string;
  current_version: number;
  archived_at: number | null;
  created_at: number;
  updated_at: number;
};

export type TemplateVersionsTable = {
  template_id: string;
  version: number;
  file_name: string;
  page_count: number;
  original_sha256: string;
  original_blob: string;
  prepared_sha256: string;
  prepared_blob: string;
  slots: string;
  fields: string;
  created_by_key_id: string | null;
  created_at: number;
};

export type TemplateInstancesTable = {
  id: string;
  workspace_id: string;
  template_id: string;
  template_version: number;
  kind: string;
  status: string;
  document_id: string;
  recipients: string;
  field_values: string;
  review_token_hash: string | null;
  review_expires_at: number | null;
  staged_at: number | null;
  confirmed_at: number | null;
  confirmed_by: string | null;
  discarded_at: number | null;
  discard_reason: string | null;
  created_by_key_id: string | null;
  created_at: number;
  updated_at: number;
};

export type SmsOutboxTable = {
  id: string;
  workspace_id: string;
  document_id: string | null;
  signing_request_id: string | null;
  template: string;
  locale: string;
  to_phone: string;
  body: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  claimed_by: string | null;
  claim_expires_at: number | null;
  last_error: string | null;
  provider_id: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
};

export type EmbedSessionsTable = {
  id: string;
  workspace_id: string;
  signing_request_id: string;
  key_id: string;
  origin: string;
  locale: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
};

/** A signer's download link for the sealed PDF and audit certificate (migration 010); the token's hash only. */
export type SignerCopiesTable = {
  id: string;
  workspace_id: string;
  document_id: string;
  signing_request_id: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
};

export type Database = {
  document_tombstones: DocumentTombstonesTable;
  blob_deletions: BlobDeletionsTable;
  job_runs: JobRunsTable;
  documents: DocumentsTable;
  signing_requests: SigningRequestsTable;
  audit_events: AuditEventsTable;
  blobs: BlobsTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  hooks: HooksTable;
  events: EventsTable;
  deliveries: DeliveriesTable;
  delivery_queue: DeliveryQueueTable;
  delivery_attempts: DeliveryAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  mail_outbox: MailOutboxTable;
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  template_instances: TemplateInstancesTable;
  sms_outbox: SmsOutboxTable;
  embed_sessions: EmbedSessionsTable;
  signer_copies: SignerCopiesTable;
  signer_codes: SignerCodesTable;
  qes_ceremonies: QesCeremoniesTable;
  bulk_sends: BulkSendsTable;
  bulk_send_rows: BulkSendRowsTable;
  users: UsersTable;
  workspace_members: WorkspaceMembersTable;
  user_tokens: UserTokensTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_drafts: DashboardDraftsTable;
  key_uses: KeyUsesTable;
};
