// What the prune job may delete of the webhook tables: a delivery once it is settled (succeeded or given up) and
// its last write is past the retention, its attempts first; an event once no delivery of it is left. A pending or
// retrying delivery, and everything of a live document's events, stays.
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { noLiveDocument, type PruneTarget } from '../jobs/prune.repo.js';
import { DUE_STATUSES } from './states.js';

/**
 * A settled delivery past the cutoff whose event is not a live document's. "Not pending or retrying" rather than
 * "succeeded or given up": the same rows, but SQLite then walks the updated_at index instead of sorting every
 * settled row by it.
 */
const settledBefore = (eb: ExpressionBuilder<Database, 'deliveries'>, cutoff: number) =>
  eb.and([
    eb('deliveries.status', 'not in', DUE_STATUSES),
    eb('deliveries.updated_at', '<', cutoff),
    eb.exists(
      eb
        .selectFrom('events as of_event')
        .select('of_event.id')
        .whereRef('of_event.id', '=', 'deliveries.event_id')
        .where((e) => noLiveDocument(e, 'of_event.document_id')),
    ),
  ]);

export const DELIVERY_ATTEMPTS_PRUNE: PruneTarget<'delivery_attempts'> = {
  table: 'delivery_attempts',
  key: ['id'],
  // An attempt starts before its delivery's last write, so the age test bounds the scan to old attempts.
  order: 'started_at',
  expired: (eb, cutoff) =>
    eb.and([
      eb('delivery_attempts.started_at', '<', cutoff),
      eb.exists(
        eb
          .selectFrom('deliveries')
          .select('deliveries.id')
          .whereRef('deliveries.id', '=', 'delivery_attempts.delivery_id')
          .where((e) => settledBefore(e as ExpressionBuilder<Database, 'deliveries'>, cutoff)),
      ),
    ]),
};

export const DELIVERIES_PRUNE: PruneTarget<'deliveries'> = {
  table: 'deliveries',
  key: ['id'],
  order: 'updated_at',
  expired: (eb, cutoff) =>
    eb.and([
      settledBefore(eb, cutoff),
      eb.not(
        eb.exists(
          eb
            .selectFrom('delivery_attempts as left_attempt')
            .select('left_attempt.id')
            .whereRef('left_attempt.delivery_id', '=', 'deliveries.id'),
        ),
      ),
    ]),
};

export const EVENTS_PRUNE: PruneTarget<'events'> = {
  table: 'events',
  key: ['id'],
  order: 'created_at',
  expired: (eb, cutoff) =>
    eb.and([
      eb('events.created_at', '<', cutoff),
      eb.not(
        eb.exists(
          eb
            .selectFrom('deliveries as left_delivery')
            .select('left_delivery.id')
            .whereRef('left_delivery.event_id', '=', 'events.id'),
        ),
      ),
      noLiveDocument(eb, 'events.document_id'),
    ]),
};

/** In this order: attempts before their deliveries, deliveries before their events. */
export const WEBHOOK_PRUNE_TARGETS = [DELIVERY_ATTEMPTS_PRUNE, DELIVERIES_PRUNE, EVENTS_PRUNE] as const;
