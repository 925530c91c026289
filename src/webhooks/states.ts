// The spec's webhook delivery states, in one table: what the dispatcher claims, what the API and dashboard filter
// and show. Moves between them are written by the delivery repository (deliveries.repo.ts), each guarded by the
// attempt count, so a worker that lost its lease records nothing.

/**
 * A row is written `pending` (no attempt made yet: a new event, or a replay); a failed attempt with a next one
 * scheduled leaves it `retrying` (next_attempt_at set); it ends `succeeded` (a 2xx) or `giving_up` (the 7th failure,
 * or its hook was deleted).
 */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'giving_up'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The states the dispatcher claims from, once next_attempt_at has come. */
export const DUE_STATUSES: readonly DeliveryStatus[] = ['pending', 'retrying'];
