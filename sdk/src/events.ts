// The webhook events (the spec's "Event kinds"): one type per event and the union over all of them, each taken from
// the generated types of the OpenAPI document's `webhooks` (src/generated/openapi.ts), where the server publishes the
// schemas it checks its payloads against. Nothing here is declared by hand but the list of names, which must equal
// the document's (checked when this compiles, and by a test against the server's catalogue).
import type { components, webhooks } from './generated/openapi.js';

export const EVENT_NAMES = [
  'signing_request.sent',
  'signing_request.viewed',
  'signing_request.signed',
  'signing_request.declined',
  'signing_request.expired',
  'document.completed',
  'template_instance.staged',
  'template_instance.confirmed',
  'template_instance.discarded',
  'placement_expired',
] as const satisfies readonly (keyof webhooks)[];

export type WebhookEventName = (typeof EVENT_NAMES)[number];
// Compiles only while the list has every event of the document (`satisfies` above refuses one the document lacks).
const everyEventListed: [Exclude<keyof webhooks, WebhookEventName>] extends [never] ? true : false = true;
void everyEventListed;

/** The body of one event as the document publishes it: `EventOf<'document.completed'>`. */
export type EventOf<N extends WebhookEventName> = webhooks[N]['post']['requestBody']['content']['application/json'];

/** Every webhook body; narrow it on `event`. */
export type WebhookEvent = { [N in WebhookEventName]: EventOf<N> }[WebhookEventName];

/** The four envelope fields every body carries, beside the event's own fields. */
export type EventEnvelope<N extends WebhookEventName = WebhookEventName> = Pick<
  EventOf<N>,
  'event' | 'event_id' | 'created_at' | 'workspace_id'
>;

type Schemas = components['schemas'];
/** The signer of `signing_request.sent`: email, role, name, slot (as a create call returns it). */
export type EventSigner = Schemas['EventSigner'];
/** The signer other signing events are about: email and name. */
export type EventSignerRef = Schemas['EventSignerRef'];
/** A template instance's recipient in `template_instance.*` events. */
export type EventRecipient = Schemas['TemplateRecipient'];

export type SigningRequestSentEvent = EventOf<'signing_request.sent'>;
export type SigningRequestViewedEvent = EventOf<'signing_request.viewed'>;
export type SigningRequestSignedEvent = EventOf<'signing_request.signed'>;
export type SigningRequestDeclinedEvent = EventOf<'signing_request.declined'>;
export type SigningRequestExpiredEvent = EventOf<'signing_request.expired'>;
export type DocumentCompletedEvent = EventOf<'document.completed'>;
export type TemplateInstanceStagedEvent = EventOf<'template_instance.staged'>;
export type TemplateInstanceConfirmedEvent = EventOf<'template_instance.confirmed'>;
export type TemplateInstanceDiscardedEvent = EventOf<'template_instance.discarded'>;
/** Retired with manual placement: nothing sends it; its fields beyond `document_id` are not specified. */
export type PlacementExpiredEvent = EventOf<'placement_expired'>;
