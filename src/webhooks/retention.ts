// The prune-events job: events, deliveries and attempts past the events retention (webhooks/retention.repo.ts says
// which rows may go).
import { pruneJob, type PruneDeps } from '../jobs/prune.js';
import type { ScheduledJob } from '../jobs/scheduler.js';
import { WEBHOOK_PRUNE_TARGETS } from './retention.repo.js';

export const pruneEventsJob = (deps: PruneDeps, batchRows?: number): ScheduledJob =>
  pruneJob(deps, { targets: WEBHOOK_PRUNE_TARGETS, retention: 'eventsMs' }, batchRows);
