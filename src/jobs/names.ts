// The names of the clock-driven jobs, as `signet jobs run` takes them. runtime.ts maps each to its job (the map is
// typed over this list, so neither can change without the other); kept apart so the CLI can list them cheaply.
export const JOB_NAMES = [
  'prune-idempotency',
  'expire-requests',
  'expire-reviews',
  'prune-embed-sessions',
  'prune-key-uses',
  'prune-events',
  'prune-outboxes',
  'prune-sessions',
  'prune-job-runs',
  'renew-timestamps',
  'send-reminders',
  'warn-expiring',
  'purge-documents',
  'sweep-orphan-blobs',
] as const;

export type JobName = (typeof JOB_NAMES)[number];
