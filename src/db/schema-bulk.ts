// Bulk sends' row types (migration 014), beside schema.ts to keep that file under the length limit.

/** One bulk send: a template version, its rows' counters, and the lease of the worker sending it. */
export type BulkSendsTable = {
  id: string;
  workspace_id: string;
  template_id: string;
  /** Pinned at upload: every row is sent from this version, whatever is published meanwhile. */
  template_version: number;
  /** `queued`, `running`, `completed` or `failed` (stopped early: the monthly cap). */
  status: string;
  total: number;
  sent: number;
  failed: number;
  /** The uploading key; null when a dashboard person uploaded (then `created_by` names them). */
  created_by_key_id: string | null;
  /** The dashboard person's audit actor (`user:<email>`); null for an API key. */
  created_by: string | null;
  /** The dashboard's Send form key (one send per form, however often it is posted); null from the API. */
  form_key: string | null;
  /** JSON: the uploader's address and User-Agent, for the documents' audit trails. */
  client_meta: string;
  claimed_by: string | null;
  claim_expires_at: number | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
};

/** One data row of a bulk send; `row` is its 1-based position among the data rows. */
export type BulkSendRowsTable = {
  bulk_send_id: string;
  row: number;
  /** JSON: the row as an instantiate body (recipients, field_values, …); null when the row could not be read. */
  input: string | null;
  /** `pending`, `sent` or `failed`; a row leaves `pending` once, in the transaction that records its outcome. */
  status: string;
  template_instance_id: string | null;
  /** JSON: [{code, field?, message}] of a failed row. */
  problems: string | null;
  /** Tries begun; a row that keeps breaking its worker is failed instead of retried for ever. */
  attempts: number;
  updated_at: number;
};
