// Wire schemas of /v1/hooks (TypeBox): they validate requests, serialise responses and generate the OpenAPI document.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { MAX_HOOK_EVENTS, MAX_URL_LENGTH } from '../limits.js';
import { EVENT_NAMES } from './events.js';

export const HookView = Type.Object({
  id: Type.String(),
  target_url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Type.String(),
  document_id: Type.Union([Type.String(), Type.Null()]),
});
export type HookView = Static<typeof HookView>;

export const HookCreated = Type.Object({ ...HookView.properties, secret: Type.String() });
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
  { additionalProperties: false },
);
export type CreateHookBody = Static<typeof CreateHookBody>;

export const TestEventSent = Type.Object({ event_id: Type.String(), hook_id: Type.String() });

export const DeliveryList = Type.Array(Type.Object({}, { additionalProperties: true }));
