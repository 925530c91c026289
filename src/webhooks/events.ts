// The event catalogue: the event names (from their payload schemas, events.schemas.ts), and the only builder of the
// wire envelope.
import { iso } from '../lib/clock.js';
import { newEventId } from '../lib/ids.js';
import { EVENT_FIELDS, type EventFields, type EventName } from './events.schemas.js';

export type { EventFields, EventName } from './events.schemas.js';

/** Every event name, in the catalogue's order; the names are the keys of the payload schemas. */
export const EVENT_NAMES = Object.keys(EVENT_FIELDS) as readonly EventName[];

const known = new Set<string>(EVENT_NAMES);
export const isEventName = (name: string): name is EventName => known.has(name);

export type Envelope = { id: string; createdAt: number; body: string };

/** Envelope fields first, then the event's own fields at the same level; serialised once, sent byte for byte. */
export function buildEnvelope<N extends EventName>(
  name: N,
  workspaceId: string,
  fields: EventFields<N>,
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
export const testEventFields = (): EventFields<'signing_request.sent'> => ({
  test: true,
  signing_request_id: 'req_test_synthetic',
  document_id: 'doc_test_synthetic',
  signer: { email: 'signer@example.com', role: 'signer', name: 'Test Signer', slot: 1 },
  locale: 'en',
  source: 'v1_api',
});
