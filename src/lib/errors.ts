// The closed error catalogue: every error body the service returns is built here, from a name in this table.
// Body shape is fixed by the spec: { error, code, meta? } (+ top-level `ip` for ip_not_allowed only).
// It lives outside http/ so that any layer (PDF workers included) can raise a catalogued error.
import { MAX_FILE_BYTES, RATE_LIMIT, RATE_WINDOW_MS } from '../limits.js';

type Entry = { status: number; code: string; message: string };

export const catalogue = {
  invalid_key: { status: 401, code: 'invalid_key', message: 'Missing, malformed, unknown or revoked API key.' },
  tier_required: { status: 402, code: 'tier_required', message: 'Your plan does not include this.' },
  enterprise_required: {
    status: 402,
    code: 'enterprise-required',
    message: 'This endpoint is available on the Enterprise plan only.',
  },
  ip_not_allowed: {
    status: 403,
    code: 'ip_not_allowed',
    message: 'This API key does not allow requests from your address.',
  },
  not_found: { status: 404, code: 'not_found', message: 'Not found.' },
  forbidden: { status: 403, code: 'forbidden', message: 'Your role in this workspace does not allow this.' },
  signer_has_no_anchor: {
    status: 400,
    code: 'signer_has_no_anchor',
    message: 'A signer has no signature anchor in the PDF.',
  },
  duplicate_anchor: { status: 400, code: 'duplicate_anchor', message: 'The same anchor appears twice on one page.' },
  no_anchors_found: {
    status: 400,
    code: 'no_anchors_found',
    message: 'No anchors found: the PDF has no extractable text or no markers.',
  },
  unknown_role: { status: 400, code: 'unknown_role', message: 'A field or anchor names a role no signer claims.' },
  placement_retired: {
    status: 400,
    code: 'placement_retired',
    message: 'Manual placement was retired on 2026-07-31; use anchors, auto_append or coordinates.',
  },
  placement_retired_endpoint: {
    status: 410,
    code: 'placement_retired',
    message: 'POST /v1/documents was retired on 2026-07-31; use POST /v1/signing-requests.',
  },
  placement_failed: { status: 422, code: 'placement_failed', message: 'PDF processing failed while placing fields.' },
  version_not_found: {
    status: 404,
    code: 'version_not_found',
    message: 'The pinned template version has no snapshot.',
  },
  template_input_invalid: {
    status: 422,
    code: 'template_input_invalid',
    message: 'One or more field values are invalid.',
  },
  missing_recipients: {
    status: 422,
    code: 'missing_recipients',
    message: 'A recipient slot with fields has no recipient.',
  },
  not_staged: { status: 409, code: 'not_staged', message: 'The template instance is not staged.' },
  discarded: { status: 409, code: 'discarded', message: 'The template instance was discarded.' },
  already_confirmed: { status: 409, code: 'already_confirmed', message: 'The template instance is already confirmed.' },
  review_expired: { status: 410, code: 'review_expired', message: 'The 14-day review window has closed.' },
  invalid_recipients: { status: 422, code: 'invalid_recipients', message: 'One or more recipients are invalid.' },
  render_failed: { status: 502, code: 'render_failed', message: 'The PDF could not be rendered; nothing was sent.' },
  review_unavailable: {
    status: 503,
    code: 'review_unavailable',
    message: 'Staging a generated file is unavailable on this deployment.',
  },
  origin_not_allowed: {
    status: 400,
    code: 'origin_not_allowed',
    message: 'The origin is not registered on this API key.',
  },
  request_not_signable: {
    status: 409,
    code: 'request_not_signable',
    message: 'The signing request is not pending or viewed, or is past its expiry.',
  },
  qes_unavailable: {
    status: 503,
    code: 'qes_unavailable',
    message: 'Qualified electronic signatures need a qualified signing provider, and none is configured.',
  },
  embedding_unavailable: {
    status: 503,
    code: 'embedding_unavailable',
    message: 'Embedding is temporarily unavailable; retry.',
  },
  verification_required: {
    status: 403,
    code: 'verification_required',
    message: 'The signer must enter the verification code sent to them before the document is shown.',
  },
  verification_code_invalid: {
    status: 422,
    code: 'verification_code_invalid',
    message: 'The verification code is not right.',
  },
  verification_code_expired: {
    status: 410,
    code: 'verification_code_expired',
    message: 'The verification code has expired; request a new one.',
  },
  verification_locked: {
    status: 409,
    code: 'verification_locked',
    message: 'Too many wrong codes; request a new one.',
  },
  verification_no_code: { status: 409, code: 'verification_no_code', message: 'No verification code was sent yet.' },
  verification_send_limit: {
    status: 429,
    code: 'verification_send_limit',
    message: 'Too many verification codes were sent to this signer.',
  },
  verification_unavailable: {
    status: 503,
    code: 'verification_unavailable',
    message: 'Signer verification is temporarily unavailable (a deployment update is not applied yet); retry.',
  },
  invalid_request: { status: 400, code: 'invalid_request', message: 'The request is invalid.' },
  rate_limited: {
    status: 429,
    code: 'rate_limited',
    message: `Rate limit exceeded: ${RATE_LIMIT} requests per ${RATE_WINDOW_MS / 1000} seconds per key.`,
  },
  idempotency_in_progress: {
    status: 409,
    code: 'idempotency_in_progress',
    message: 'A request with this Idempotency-Key is still in progress.',
  },
  idempotency_key_reused: {
    status: 422,
    code: 'idempotency_key_reused',
    message: 'This Idempotency-Key was used with a different request.',
  },
  document_not_completed: {
    status: 409,
    code: 'document_not_completed',
    message: 'The document is not completed yet.',
  },
  document_not_ended: {
    status: 409,
    code: 'document_not_ended',
    message: 'Only a document that has ended (completed, declined, withdrawn, expired or discarded) can be purged.',
  },
  invalid_file: { status: 400, code: 'invalid_file', message: 'The file is not a readable, unencrypted PDF.' },
  file_too_large: {
    status: 413,
    code: 'file_too_large',
    message: `The file is over the ${MAX_FILE_BYTES / 1024 / 1024} MB limit.`,
  },
  file_url_unreachable: { status: 400, code: 'file_url_unreachable', message: 'The file_url could not be fetched.' },
  payload_too_large: { status: 413, code: 'payload_too_large', message: 'The request body is over the size limit.' },
  request_timeout: {
    status: 408,
    code: 'request_timeout',
    message: 'The request did not arrive in time; the connection is closed.',
  },
  url_too_long: { status: 414, code: 'url_too_long', message: 'The request URL is too long.' },
  service_unavailable: {
    status: 503,
    code: 'service_unavailable',
    message: 'The service is busy; retry after the time in Retry-After.',
  },
  internal_error: { status: 500, code: 'internal_error', message: 'Internal error.' },
} as const satisfies Record<string, Entry>;

export type ErrorName = keyof typeof catalogue;

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(
    readonly name_: ErrorName,
    message?: string,
    readonly meta?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
    /** Only for ip_not_allowed: the observed address, or null when unknown. */
    readonly ip?: string | null,
  ) {
    const entry = catalogue[name_];
    super(message ?? entry.message);
    this.status = entry.status;
    this.code = entry.code;
  }

  body(): Record<string, unknown> {
    const b: Record<string, unknown> = { error: this.message, code: this.code };
    if (this.meta !== undefined) b.meta = this.meta;
    if (this.name_ === 'ip_not_allowed') b.ip = this.ip ?? null;
    return b;
  }
}

export type ApiErrorOptions = {
  message?: string;
  meta?: Record<string, unknown>;
  headers?: Record<string, string>;
  ip?: string | null;
};

export const apiError = (name: ErrorName, opts: ApiErrorOptions = {}): ApiError =>
  new ApiError(name, opts.message, opts.meta, opts.headers, opts.ip);
