// The webhook event catalogue (the spec's "Event kinds"): one type per event, a union over all of them. Fields that
// the API also returns are looked up in the generated types; the rest follow the spec's table (the OpenAPI document
// describes requests and responses, not webhook bodies). A test checks the names against the server's catalogue and
// the fields against real deliveries.
import type { CreatedSigningRequest, TemplateInstance } from './types.js';

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
] as const;

export type WebhookEventName = (typeof EVENT_NAMES)[number];

/** The four envelope fields every body carries, beside the event's own fields. */
export type EventEnvelope<N extends WebhookEventName = WebhookEventName> = {
  event: N;
  /** `evt_` + 32 hex; stable across retries: deduplicate on it. */
  event_id: string;
  /** ISO 8601 UTC with milliseconds. */
  created_at: string;
  workspace_id: string;
};

/** The signer as a create call returns it: email, role, name, slot. */
export type EventSigner = CreatedSigningRequest['signing_requests'][number]['signer'];
export type EventSignerRef = Pick<EventSigner, 'email' | 'name'>;
type Recipients = TemplateInstance['recipients'];
type InstanceFields = Pick<TemplateInstance, 'document_id' | 'template_id' | 'template_version' | 'kind'> & {
  instance_id: TemplateInstance['id'];
};

export type SigningRequestSentEvent = EventEnvelope<'signing_request.sent'> & {
  signing_request_id: string;
  document_id: string;
  signer: EventSigner;
  locale: string;
  source: 'v1_api' | 'template_instance';
  /** Only on the dashboard's (or `POST /v1/hooks/{id}/test`'s) synthetic test event. */
  test?: true;
};

export type SigningRequestViewedEvent = EventEnvelope<'signing_request.viewed'> & {
  signing_request_id: string;
  document_id: string;
  signer: EventSignerRef;
};

export type SigningRequestSignedEvent = EventEnvelope<'signing_request.signed'> & {
  signing_request_id: string;
  document_id: string;
  signer: EventSignerRef;
  /** SHA-256 of the PDF the signer saw. */
  sha256: string;
};

export type SigningRequestDeclinedEvent = EventEnvelope<'signing_request.declined'> & {
  signing_request_id: string;
  document_id: string;
  signer: EventSignerRef;
  reason: string;
};

export type SigningRequestExpiredEvent = EventEnvelope<'signing_request.expired'> & {
  signing_request_id: string;
  document_id: string;
  signer: EventSignerRef;
  /** Equals the request's `expires_at`. */
  expired_at: string;
};

export type DocumentCompletedEvent = EventEnvelope<'document.completed'> & {
  /** null for a generated template file, which has no signers. */
  signing_request_id: string | null;
  document_id: string;
  signer: EventSignerRef | null;
  /** `{base_url}/v1/documents/<id>/signed`; fetch it with your API key (`documents.signedPdf`). */
  signed_pdf_url: string;
  /** `{base_url}/v1/documents/<id>/audit-trail` (`documents.auditTrail`). */
  audit_trail_url: string;
  sha256: string;
  cert_serial: string;
  tsa_provider: string;
  /** ISO 8601 UTC. */
  tsa_signed_at: string;
};

export type TemplateInstanceStagedEvent = EventEnvelope<'template_instance.staged'> &
  InstanceFields & {
    review_url: string;
    review_expires_at: string;
    recipients: Recipients;
  };

export type TemplateInstanceConfirmedEvent = EventEnvelope<'template_instance.confirmed'> &
  InstanceFields & {
    /** `api` or `review_page`. */
    actor: string;
    recipients: Recipients;
  };

export type TemplateInstanceDiscardedEvent = EventEnvelope<'template_instance.discarded'> &
  InstanceFields & {
    reason: 'discarded' | 'expired';
  };

/** Retired manual placement only; its payload fields are not specified beyond `document_id`. */
export type PlacementExpiredEvent = EventEnvelope<'placement_expired'> & {
  document_id: string;
  [field: string]: unknown;
};

/** Every webhook body; narrow it on `event`. */
export type WebhookEvent =
  | SigningRequestSentEvent
  | SigningRequestViewedEvent
  | SigningRequestSignedEvent
  | SigningRequestDeclinedEvent
  | SigningRequestExpiredEvent
  | DocumentCompletedEvent
  | TemplateInstanceStagedEvent
  | TemplateInstanceConfirmedEvent
  | TemplateInstanceDiscardedEvent
  | PlacementExpiredEvent;

/** The event type of one name: `EventOf<'document.completed'>`. */
export type EventOf<N extends WebhookEventName> = Extract<WebhookEvent, { event: N }>;
