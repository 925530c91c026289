// The event catalogue: the only list of event names, and the only builder of the wire envelope.
import { iso } from '../lib/clock.js';
import { newEventId } from '../lib/ids.js';

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
  // Retired with manual placement: still a name hooks may filter on (the spec lists it), but nothing emits it.
  'placement_expired',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

const known = new Set<string>(EVENT_NAMES);
export const isEventName = (name: string): name is EventName => known.has(name);

export type Envelope = { id: string; createdAt: number; body: string };

/** Envelope fields first, then the event's own fields at the same level; serialised once, sent byte for byte. */
export function buildEnvelope(
  name: EventName,
  workspaceId: string,
  fields: Record<string, unknown>,
  now: number,
): Envelope {
  const id = newEventId();
  const body = JSON.stringify({
    event: name,
    event_id: id,
    created_at: iso(now),
    workspace_id: workspaceId,
    ...fields,
  });
  return { id, createdAt: now, body };
}

/** The spec's synthetic test event: a `signing_request.sent` with `test: true` and fixed synthetic ids. */
export const testEventFields = (): Record<string, unknown> => ({
  test: true,
  signing_request_id: 'req_test_synthetic',
  document_id: 'doc_test_synthetic',
  signer: { email: 'signer@example.com', role: 'signer', name: 'Test Signer', slot: 1 },
  locale: 'en',
  source: 'v1_api',
});
