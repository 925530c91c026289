// Row types of every table. Timestamps are integer milliseconds since the epoch; lists and objects are JSON text.
import type { Generated } from 'kysely';

export type WorkspacesTable = {
  id: string;
  name: string;
  slug: string;
  tier: string;
  reply_to: string | null;
  created_at: number;
};

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
  claimed_by: string | null;
  claim_expires_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
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

export type Database = {
  job_runs: JobRunsTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  hooks: HooksTable;
  events: EventsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  mail_outbox: MailOutboxTable;
};
