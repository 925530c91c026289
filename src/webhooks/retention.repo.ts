// What the prune job may delete of the webhook tables: a delivery once it is settled (succeeded or given up) and
// its last write is past the retention, its attempts first; an event once no delivery of it is left. A pending or
// retrying delivery, and everything of a live document's events, stays. A document's callback hook is retired (not
// deleted: its deliveries keep their history) once the document ended before the cutoff and no delivery to it is
// open, so the workspace's hook list and every event's hook lookup stop growing with the documents ever sent.
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { LIVE_DOCUMENT_STATUSES, noLiveDocument, type PruneTarget } from '../jobs/prune.repo.js';
import { DUE_STATUSES } from './states.js';

/**
 * A settled delivery whose last write is past the cutoff and whose event is not a live document's. Walked by
 * created_at (migration 028: an index on updated_at, which every outcome writes, would make each record a new index
 * entry): a delivery is written after it is created, so the age test on created_at bounds the walk, and updated_at
 * decides.
 */
const settledBefore = (eb: ExpressionBuilder<Database, 'deliveries'>, cutoff: number) =>
  eb.and([
    eb('deliveries.created_at', '<', cutoff),
    eb('deliveries.updated_at', '<', cutoff),
    eb('deliveries.status', 'not in', DUE_STATUSES),
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
  order: 'created_at',
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

/** A live callback hook (`callback_url`) whose document ended before the cutoff, with no delivery left to send. */
export const CALLBACK_HOOKS_RETIRE: PruneTarget<'hooks'> = {
  table: 'hooks',
  key: ['id'],
  // The walk is migration 019's index of live callback hooks; a hook is made before its document ends.
  order: 'created_at',
  retire: 'deleted_at',
  expired: (eb, cutoff) =>
    eb.and([
      eb('hooks.deleted_at', 'is', null),
      eb('hooks.document_id', 'is not', null),
      eb('hooks.created_at', '<', cutoff),
      eb.exists(
        eb
          .selectFrom('documents as ended_doc')
          .select('ended_doc.id')
          .whereRef('ended_doc.id', '=', 'hooks.document_id')
          .where('ended_doc.status', 'not in', LIVE_DOCUMENT_STATUSES)
          .where((e) => e(e.fn.coalesce('ended_doc.closed_at', 'ended_doc.completed_at'), '<', cutoff)),
      ),
      eb.not(
        eb.exists(
          eb
            .selectFrom('deliveries as open_delivery')
            .select('open_delivery.id')
            .whereRef('open_delivery.hook_id', '=', 'hooks.id')
            .where('open_delivery.status', 'in', DUE_STATUSES),
        ),
      ),
    ]),
};

/** In this order: attempts before their deliveries, deliveries before their events; then the retired hooks. */
export const WEBHOOK_PRUNE_TARGETS = [
  DELIVERY_ATTEMPTS_PRUNE,
  DELIVERIES_PRUNE,
  EVENTS_PRUNE,
  CALLBACK_HOOKS_RETIRE,
] as const;
