// The OpenAPI document's `webhooks` (OpenAPI 3.1): one entry per event of the catalogue, a POST whose body is the
// event's schema (webhooks/events.schemas.ts), with the delivery headers and an example. Every event body, the
// pieces they share (the schemas with an `$id`) and the headers are named components, each written once. The rest
// of the document is left as it was.
import {
  SIGNATURE_TOLERANCE_SECONDS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_DELAYS_MS,
  WEBHOOK_TIMEOUT_MS,
} from '../limits.js';
import { EVENT_NAMES, type EventName } from '../webhooks/events.js';
import { eventBodyExample, eventBodySchema } from '../webhooks/events.schemas.js';
import { USER_AGENT } from '../webhooks/signature.js';

/** The tag that groups the events in the reference. */
export const EVENTS_TAG = 'Webhook events';

/** `signing_request.sent` → `SigningRequestSentEvent`: the component's name, and the SDK's type name. */
export const eventComponentName = (name: EventName) =>
  `${name
    .split(/[._]/)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}Event`;

type Header = { in: 'header'; required: true; description: string; schema: object; example: string };
const header = (description: string, example: string, schema: object = { type: 'string' }): Header => ({
  in: 'header',
  required: true,
  description,
  schema,
  example,
});
const legacy = (name: string, h: Header): Header => ({
  ...h,
  description: `Byte for byte the same as \`${name}\`, sent permanently for receivers written against it.`,
});

const signature = header(
  '`t=<unix seconds>,v1=<64 lowercase hex>`: `v1` is the HMAC-SHA256, keyed with the hook’s `whsec_` secret, of `t`, ' +
    'a `.` and the raw body byte for byte; each attempt is signed afresh. Check it before trusting the body: compare ' +
    `in constant time, refuse a \`t\` more than ${SIGNATURE_TOLERANCE_SECONDS} seconds from your clock, and hash the ` +
    'raw body, not re-serialised JSON (the SDK’s `webhooks.verify` does all of it).',
  `t=1795341600,v1=${'5d41402abc4b2a76b9719d911017c592'.repeat(2)}`,
  { type: 'string', pattern: '^t=\\d+,v1=[0-9a-f]{64}$' },
);
const eventId = header(
  'The body’s `event_id`, the same on every retry: deduplicate on it, after the signature check.',
  eventBodyExample('signing_request.sent').event_id,
);

/** The headers every delivery carries, named components (Content-Type is the request body's media type). */
const HEADERS: Record<string, Header> = {
  'User-Agent': header('Always the same.', USER_AGENT, { type: 'string', enum: [USER_AGENT] }),
  'X-Service-Signature': signature,
  'X-Service-Event-Id': eventId,
  'X-Legacy-Signature': legacy('X-Service-Signature', signature),
  'X-Legacy-Event-Id': legacy('X-Service-Event-Id', eventId),
};

/** One event's headers in the spec's order; the event name's two are its own. */
function headersOf(name: EventName) {
  const ref = (h: string) => ({ $ref: `#/components/parameters/${h}` });
  const event = header('The body’s `event`.', name, { type: 'string', enum: [name] });
  return [
    ref('User-Agent'),
    ref('X-Service-Signature'),
    ref('X-Service-Event-Id'),
    { name: 'X-Service-Event', ...event },
    ref('X-Legacy-Signature'),
    ref('X-Legacy-Event-Id'),
    { name: 'X-Legacy-Event', ...legacy('X-Service-Event', event) },
  ];
}

const schedule = WEBHOOK_RETRY_DELAYS_MS.map((ms) => (ms < 3600_000 ? `${ms / 60_000} min` : `${ms / 3600_000} h`));
const acknowledged = {
  '2XX': {
    description:
      `Any 2xx answer acknowledges the delivery. Any other status, a redirect (not followed), or no answer within ` +
      `${WEBHOOK_TIMEOUT_MS / 1000} seconds is a failure: the event is sent again after ${schedule.join(', ')} ` +
      `(${WEBHOOK_MAX_ATTEMPTS} attempts in all), then given up.`,
  },
};

/** `const` as `enum`, as @fastify/swagger writes the routes' schemas; a schema with an `$id` becomes a `$ref`. */
function toOpenApi(s: unknown, shared: Record<string, unknown>): unknown {
  if (Array.isArray(s)) return s.map((x) => toOpenApi(x, shared));
  if (!s || typeof s !== 'object') return s;
  const { $id, const: value, ...rest } = s as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) out[k] = k === 'examples' ? v : toOpenApi(v, shared);
  if (value !== undefined) out.enum = [value];
  if (typeof $id !== 'string') return out;
  shared[$id] = out;
  return { $ref: `#/components/schemas/${$id}` };
}

export type WebhookDocument = {
  components: { schemas?: Record<string, unknown>; parameters?: Record<string, unknown> };
  webhooks?: Record<string, unknown>;
};

/** Adds the events to the document: `webhooks`, and their components after the existing ones. */
export function publishWebhooks<D extends WebhookDocument>(doc: D): D {
  const bodies: Record<string, unknown> = {};
  const shared: Record<string, unknown> = {};
  const webhooks: Record<string, unknown> = {};
  for (const name of EVENT_NAMES) {
    const component = eventComponentName(name);
    const schema = toOpenApi(eventBodySchema(name), shared) as { title: string; description: string };
    bodies[component] = schema;
    webhooks[name] = {
      post: {
        summary: name,
        description: `**${schema.title}.** ${schema.description}`,
        tags: [EVENTS_TAG],
        security: [],
        parameters: headersOf(name),
        requestBody: {
          required: true,
          description: `The \`${name}\` event: the envelope, then the event’s own fields, in one JSON object.`,
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${component}` },
              example: eventBodyExample(name),
            },
          },
        },
        responses: acknowledged,
      },
    };
  }
  const parameters = Object.fromEntries(Object.entries(HEADERS).map(([name, h]) => [name, { name, ...h }]));
  doc.components.schemas = { ...doc.components.schemas, ...bodies, ...shared };
  doc.components.parameters = { ...doc.components.parameters, ...parameters };
  doc.webhooks = webhooks;
  return doc;
}
