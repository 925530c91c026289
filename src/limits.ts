// Every limit a caller can meet, in one place: the spec's Limits table (verbatim values) and the limits Signet sets
// where the spec leaves them open (README and ARCHITECTURE.md repeat these). Internal tunables (leases, worker time
// limits) stay beside the code they tune.

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const MB = 1024 * 1024;

// ── The spec's Limits table ──────────────────────────────────────────────────────────────────────────────────────
/** Requests per window per API key (all /v1/* except GET /v1/me); an operator may raise it per key. */
export const RATE_LIMIT = 60;
/** The fixed window: it opens on the bucket's first request and closes this long after. */
export const RATE_WINDOW_MS = 60_000;
/** Entries in one key's IP allowlist. */
export const MAX_ALLOWLIST_ENTRIES = 50;
/** Named events in one hook's filter (empty = all). */
export const MAX_HOOK_EVENTS = 10;
/** A delivery without a complete response within this time has failed. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/**
 * How long a worker holds the deliveries it claimed (DELIVERY_LEASE_MS): a worker that dies mid-delivery leaves them
 * to others after this. At least the timeout and a margin, so a slow receiver's delivery is never claimed twice.
 */
export const DELIVERY_LEASE_MS = 60_000;
export const DELIVERY_LEASE_MIN_MS = WEBHOOK_TIMEOUT_MS + 5_000;
/** Delay before attempt n+1 after attempt n failed; attempt 1 is immediate, so this allows 7 attempts. */
export const WEBHOOK_RETRY_DELAYS_MS = [1 * MIN, 5 * MIN, 30 * MIN, 2 * HOUR, 6 * HOUR, 24 * HOUR] as const;
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_DELAYS_MS.length + 1;
/** Receiver-side replay tolerance the spec recommends (documented for receivers; nothing here enforces it). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;
/** `ttl_seconds` of an embedded sign session, both ends included. */
export const EMBED_TTL_SECONDS = { min: 60, max: 900 } as const;
/** How long a staged template instance waits for confirm or discard. */
export const REVIEW_WINDOW_MS = 14 * DAY;

// ── Signet's own limits (open points of the spec) ────────────────────────────────────────────────────────────────
/** Idempotency keys: at most this many visible ASCII characters, kept this long. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_TTL_MS = 24 * HOUR;
/**
 * A receiver (a hook URL's origin) with a request in flight longer than this is slow: its requests stop holding a
 * worker's lanes, so other receivers' deliveries go on (webhooks/targets.ts).
 */
export const WEBHOOK_SLOW_MS = 1_000;
/** Requests one worker keeps in flight to a slow receiver; its further due deliveries are deferred, not attempted. */
export const WEBHOOK_SLOW_TARGET_IN_FLIGHT = 8;
/** The longest one deferral moves a delivery's next attempt back. */
export const WEBHOOK_DEFER_MAX_MS = 5 * MIN;
/** Key-use audit rows (one per /v1 request made with a key) are kept this long by default. */
export const KEY_USE_RETENTION_MS = 30 * DAY;
/** Allowed embed origins per key. */
export const MAX_EMBED_ORIGINS = 50;
/** One PDF, uploaded or fetched from file_url. */
export const MAX_FILE_BYTES = 25 * MB;
export const MAX_PDF_PAGES = 500;
/** Signers on one signing request, and fields placed on one document. */
export const MAX_SIGNERS = 20;
export const MAX_FIELDS = 500;
/** A signing request's expiry when none is given, and the furthest one may be set. */
export const DEFAULT_EXPIRY_MS = 30 * DAY;
export const MAX_EXPIRY_MS = 365 * DAY;
/** Automatic reminders: the first `after_days` after a signer's invitation, then every `every_days` (both ends
 * included), at most MAX_AUTO_REMINDERS per signer; the expiry warning goes this long before `expires_at`. */
export const REMINDER_AFTER_DAYS = { min: 1, max: 60 } as const;
export const REMINDER_EVERY_DAYS = { min: 1, max: 30 } as const;
export const MAX_AUTO_REMINDERS = 5;
export const EXPIRY_WARNING_MS = 48 * HOUR;
/** A signer's copy link (the sealed PDF and audit certificate, mailed on completion) works this long. */
export const SIGNER_COPY_VALIDITY_MS = 30 * DAY;
/** A drawn signature image. */
export const MAX_PNG_BYTES = 2 * MB;
export const MAX_PNG_SIDE = 4000;
/** Request bodies: the default, routes that carry a PDF in base64 (25 MB of PDF plus the rest), and signing. */
export const DEFAULT_BODY_LIMIT = 1 * MB;
export const FILE_BODY_LIMIT = 40 * MB;
export const SIGN_BODY_LIMIT = 4 * MB;
/** Templates: a field key, an anchor text, a `pattern`, and a value given in `field_values` (text, e-mail). */
export const MAX_FIELD_KEY_LENGTH = 64;
export const MAX_ANCHOR_LENGTH = 100;
export const MAX_PATTERN_LENGTH = 200;
export const MAX_FIELD_VALUE_LENGTH = 1000;
/** Outbound URLs (target_url, callback_url, file_url). */
export const MAX_URL_LENGTH = 2048;
/**
 * Revocation data fetched for a foreign certificate (SEAL_P12, TSA_URL): one CRL download's size, time and redirects,
 * and the in-memory cache of verified CRLs (entries and bytes held at once).
 */
export const MAX_CRL_BYTES = 10 * MB;
export const CRL_FETCH_TIMEOUT_MS = 15_000;
/** How far a fetched CRL's thisUpdate may be ahead of our clock (clock skew between issuer and us). */
export const CRL_CLOCK_SKEW_MS = 5 * 60_000;
export const CRL_MAX_REDIRECTS = 3;
export const CRL_CACHE_MAX_ENTRIES = 64;
export const CRL_CACHE_MAX_BYTES = 32 * MB;

// ── Protection of the process (defaults; each has an environment variable, see config.ts) ────────────────────────
/** A request's body must have arrived this long after its headers did; routes that take a file get longer. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Long enough for FILE_BODY_LIMIT at 2 Mbit/s (about 168 s). */
export const UPLOAD_TIMEOUT_MS = 180_000;
/** The whole header block, from the connection's first byte (or the end of the previous request). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** An idle keep-alive connection between requests. Behind a load balancer, set it above the balancer's own. */
export const KEEP_ALIVE_TIMEOUT_MS = 10_000;
/** A socket with no traffic at all; longer than any handler may take (PDF work is limited to well under it). */
export const IDLE_SOCKET_TIMEOUT_MS = 120_000;
/** A PDF or seal worker thread with nothing to do for this long is stopped, giving its memory back. */
export const PDF_WORKER_IDLE_MS = 2 * MIN;
/** Request-body bytes (and file_url downloads) held at once across the routes that take a file: 4 largest bodies. */
export const MAX_BODIES_IN_FLIGHT_BYTES = 4 * FILE_BODY_LIMIT;
/** Requests per address per 60 s window on pages and actions that need no API key (signer pages today). */
export const PUBLIC_RATE_LIMIT = 120;
/** The request line and headers together (Node's maxHeaderSize). */
export const MAX_HEADER_BYTES = 16 * 1024;
/** A request URL, path and query. */
export const MAX_REQUEST_URL_LENGTH = 4096;
/** Nesting of arrays and objects in a JSON body. */
export const MAX_JSON_DEPTH = 32;

// Signet's own: long-term signatures (issue 21).
/** A completed document gets a new document timestamp this long before its last one's certificate expires. */
export const LTV_RENEW_BEFORE_MS = 365 * DAY;
/** Documents one renewal run takes at most (the job runs daily; a backlog drains over several runs). */
export const LTV_RENEW_BATCH = 500;

// Signet's own: signer verification (issue 22).
/** A verification code is six digits and works this long after it was sent. */
export const VERIFICATION_CODE_DIGITS = 6;
export const VERIFICATION_CODE_TTL_MS = 10 * MIN;
/** Wrong entries of one code; the next try is refused as locked, and a new code is needed. */
export const VERIFICATION_MAX_TRIES = 5;
/** Codes one signer may be sent: per rolling hour, and in all. */
export const VERIFICATION_SENDS_PER_HOUR = 5;
export const VERIFICATION_SEND_WINDOW_MS = HOUR;
export const VERIFICATION_SENDS_TOTAL = 10;

// Signet's own: bulk sends (issue 24).
/** Data rows of one bulk send (a CSV header line is not counted). */
export const MAX_BULK_ROWS = 5_000;
/** A bulk send's body, CSV or JSON: 5,000 rows of a few recipients and values each. */
export const BULK_BODY_LIMIT = 16 * MB;

// Signet's own: retention of the growing tables (issue 25). Each is a default; config.ts reads its variable.
/**
 * How long each growing table keeps a row after it is done (ARCHITECTURE.md "Retention and pruning" says why each
 * keeps the spec's promises). Idempotency keys are kept at least IDEMPOTENCY_TTL_MS, the lifetime they are honoured.
 */
export const RETENTION_DEFAULTS = {
  /** Events, and their deliveries and attempts, after a delivery's last attempt (history and replay). */
  eventsMs: 30 * DAY,
  keyUsesMs: KEY_USE_RETENTION_MS,
  idempotencyMs: IDEMPOTENCY_TTL_MS,
  /** Mail and SMS outbox rows after they were sent (unsent rows stay). */
  outboxMs: 30 * DAY,
  /** Dashboard sessions, embedded sessions and dashboard links after they ended. */
  sessionsMs: 7 * DAY,
  jobRunsMs: 30 * DAY,
} as const;
/** Rows one prune statement deletes at most (each batch is its own short transaction). */
export const PRUNE_BATCH_ROWS = 1000;
/** One prune run stops after this long and leaves the rest to the next hourly run. */
export const PRUNE_TIME_BUDGET_MS = 10 * MIN;

/** A workspace's retention of ended documents, in whole days (`retention_days`; null keeps them for ever). */
export const RETENTION_DAYS = { min: 1, max: 36_500 } as const;
/** Documents purged per transaction by the purge-documents job (each purge is a handful of short statements). */
export const PURGE_BATCH_DOCUMENTS = 20;
/**
 * A blob nothing names is deleted once it is this old (blob-orphans.ts): younger, its transaction may still commit,
 * or the template editor's upload may still be published.
 */
export const BLOB_ORPHAN_GRACE_MS = 24 * 3600_000;

/** A workspace's logo (issue 27): a PNG or JPEG file of at most this many bytes and pixels a side. */
export const LOGO_MAX_BYTES = 512 * 1024;
export const LOGO_MAX_SIDE = 1000;
/** The dashboard's logo upload form: a bigger file is still read (and refused by its size, in the form) up to this. */
export const LOGO_FORM_BODY_LIMIT = 8 * 1024 * 1024;
/** A workspace's accent colour must reach this WCAG contrast against white text and every page background. */
export const BRAND_MIN_CONTRAST = 4.5;
/** A workspace's display name, in characters (as `signet workspace create --name`). */
export const WORKSPACE_NAME_MAX = 200;
