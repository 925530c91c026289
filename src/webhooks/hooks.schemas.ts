// Wire schemas of /v1/hooks (TypeBox): they validate requests, serialise responses and generate the OpenAPI document.
import { Type, type Static, type TSchema } from 'typebox';
import { MAX_HOOK_EVENTS, MAX_URL_LENGTH } from '../limits.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from './states.js';
import { EVENT_NAMES } from './events.js';

// The examples of the OpenAPI document: one hook and one delivery, seen through every route.
const hookExample = {
  id: 'hook_2b7e151628aed2a6abf71588',
  target_url: 'https://example.com/hooks/signet',
  events: ['signing_request.signed', 'document.completed'],
  created_at: '2026-11-22T10:00:00.000Z',
  document_id: null,
};
const eventId = 'evt_0f1e2d3c4b5a69788796a5b4c3d2e1f0';

export const HookView = Type.Object({
  id: Type.String(),
  target_url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Type.String(),
  document_id: Type.Union([Type.String(), Type.Null()]),
});
export type HookView = Static<typeof HookView>;
export const HooksOut = Type.Array(HookView, { examples: [[hookExample]] });

export const HookCreated = Type.Object(
  { ...HookView.properties, secret: Type.String() },
  { examples: [{ ...hookExample, secret: 'whsec_3q2-7wVfN0xY8cJ1kH4mZ9pR6tL5sA0dE2gB7uW1iOo' }] },
);
export type HookCreated = Static<typeof HookCreated>;

export const CreateHookBody = Type.Object(
  {
    target_url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH }),
    events: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), {
        // Duplicates collapse before the service counts distinct names against MAX_HOOK_EVENTS; this bounds the work.
        maxItems: 10 * MAX_HOOK_EVENTS,
        description: `Event names (${EVENT_NAMES.join(', ')}); empty = all.`,
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ target_url: hookExample.target_url, events: hookExample.events }],
  },
);
export type CreateHookBody = Static<typeof CreateHookBody>;

export const TestEventSent = Type.Object(
  { event_id: Type.String(), hook_id: Type.String() },
  { examples: [{ event_id: eventId, hook_id: hookExample.id }] },
);

export const HookDeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  delivery_id: Type.String({ minLength: 1, maxLength: 64 }),
});

/** The answer to a replay: the new delivery, of the same event to the same hook. */
export const DeliveryReplayed = Type.Object(
  {
    delivery_id: Type.String({ description: 'The new delivery, due now, with its own attempts.' }),
    event_id: Type.String({ description: "The source delivery's event id, unchanged (receivers deduplicate on it)." }),
    hook_id: Type.String(),
  },
  { examples: [{ delivery_id: 'del_6f7a8b9c0d1e2f3a4b5c6d7e', event_id: eventId, hook_id: hookExample.id }] },
);
export type DeliveryReplayed = Static<typeof DeliveryReplayed>;

/** A history filter: one state, or `failed` (retrying and giving_up). */
export const DELIVERY_FILTERS = [...DELIVERY_STATUSES, 'failed'] as const;
export type DeliveryFilter = (typeof DELIVERY_FILTERS)[number];

export const DeliveryHistoryQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Unsafe<DeliveryFilter>({
        type: 'string',
        enum: [...DELIVERY_FILTERS],
        description: 'Only deliveries in this state; `failed` = `retrying` and `giving_up`.',
      }),
    ),
    before: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "Paging: only deliveries older than this delivery of the hook (the last page's last id).",
      }),
    ),
    // Query values arrive as text (the app's validator does not coerce); the service checks the range.
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: 'Page size, 1 to 100 (default 100).' })),
  },
  { additionalProperties: false },
);
export type DeliveryHistoryQuery = Static<typeof DeliveryHistoryQuery>;

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const AttemptView = Type.Object({
  attempt: Type.Integer({ description: '1 to 7' }),
  started_at: Type.String(),
  duration_ms: Type.Integer({ description: 'Latency: request sent to response read (or failure).' }),
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  response_body: Nullable(Type.String({ description: 'The first 2048 characters of the response.' })),
});
export type AttemptView = Static<typeof AttemptView>;

export const DeliveryView = Type.Object({
  id: Type.String(),
  workspace_id: Type.String(),
  event_id: Type.String(),
  event: Type.String(),
  hook_id: Type.String(),
  status: Type.Unsafe<DeliveryStatus>({
    type: 'string',
    enum: [...DELIVERY_STATUSES],
    description: '`pending` (not attempted yet), `retrying` (failed, next_attempt_at set), `succeeded`, `giving_up`.',
  }),
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Type.String()),
  created_at: Type.String(),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  attempts_log: Type.Array(AttemptView),
});
export type DeliveryView = Static<typeof DeliveryView>;

export const DeliveryList = Type.Array(DeliveryView, {
  examples: [
    [
      {
        id: 'del_5e6f7a8b9c0d1e2f3a4b5c6d',
        workspace_id: 'ws_4f1c2a9e8b7d6c5a3e2f1b0d',
        event_id: eventId,
        event: 'signing_request.signed',
        hook_id: hookExample.id,
        status: 'retrying',
        attempts: 1,
        next_attempt_at: '2026-11-22T10:06:00.000Z',
        created_at: '2026-11-22T10:05:00.000Z',
        last_status_code: 503,
        last_error: 'non-2xx response: 503',
        attempts_log: [
          {
            attempt: 1,
            started_at: '2026-11-22T10:05:00.000Z',
            duration_ms: 84,
            status_code: 503,
            error: 'non-2xx response: 503',
            response_body: 'Service Unavailable',
          },
        ],
      },
    ],
  ],
});
