// The webhook payloads as TypeBox schemas: the spec's "Event envelope" and each event's own fields ("Event kinds",
// and for the events whose fields the spec does not show, what the service sends). They are the one source of the
// event names (events.ts), of what `tx.emit` accepts per name, of the OpenAPI document's `webhooks` section
// (docs/webhooks.ts) and, generated from that, of the SDK's event types. Tests check every delivered body against
// them with no field more or less (testing/event-bodies.ts). Only `Type` is loaded here: validation is for tests.
import { Type, type Static, type TObject, type TProperties } from 'typebox';

const ISO_MS = 'ISO 8601 UTC with milliseconds.';

/** The four envelope fields, first in every body; `event` is the body's own name. */
export const envelopeFields = <N extends string>(name: N) => ({
  event: Type.Literal(name, { description: 'The event name, as in the `X-Service-Event` header.' }),
  event_id: Type.String({
    pattern: '^evt_[0-9a-f]{32}$',
    description: '`evt_` + 32 hex; the same on every retry of the event: deduplicate on it.',
  }),
  created_at: Type.String({ format: 'date-time', description: `When the event happened: ${ISO_MS}` }),
  workspace_id: Type.String({ description: 'The workspace the event belongs to.' }),
});

// ── Shared pieces: each is a named component of the OpenAPI document (its `$id`) ─────────────────────────────────
// The API's own responses show signers and recipients with these properties too (SignerOut, RecipientOut), built
// from them; descriptions therefore sit on the objects, not on the properties.

export const EventSigner = Type.Object(
  { email: Type.String(), role: Type.String(), name: Type.String(), slot: Type.Integer() },
  {
    $id: 'EventSigner',
    description:
      'The signer as the create call returns it: e-mail, role, name and position (`slot`, from 1). A template ' +
      'recipient has its slot name as `role`; one reached by SMS only has `email: ""`.',
  },
);

export const EventSignerRef = Type.Object(
  { email: Type.String(), name: Type.String() },
  { $id: 'EventSignerRef', description: 'The signer the event is about.' },
);

const NullableString = () => Type.Union([Type.String(), Type.Null()]);
export const TemplateRecipient = Type.Object(
  {
    slot: Type.String(),
    name: Type.String(),
    email: NullableString(),
    phone: NullableString(),
    channel: Type.String(),
    signing_order: Type.Integer(),
    signing_request_id: Type.Optional(Type.String()),
  },
  {
    $id: 'TemplateRecipient',
    description:
      'A recipient of a template instance, as the instance shows it: its slot, contact, channel (`email` or `sms`) ' +
      'and turn; `signing_request_id` once its signing request exists (after confirm).',
  },
);

// ── Each event's own fields ───────────────────────────────────────────────────────────────────────────────────────

const requestIds = () => ({
  signing_request_id: Type.String({ description: 'The signing request (`sr_…`): one signer of the document.' }),
  document_id: Type.String({ description: 'The document (`doc_…`); a document-scoped hook matches on it.' }),
});

const instanceFields = () => ({
  instance_id: Type.String({ description: 'The template instance (`tin_…`).' }),
  document_id: Type.String({ description: 'The instance’s document (`doc_…`); a document-scoped hook matches on it.' }),
  template_id: Type.String({ description: 'The template (`tpl_…`).' }),
  template_version: Type.Integer({ description: 'The template version the instance was made from.' }),
  kind: Type.Union([Type.Literal('instantiate'), Type.Literal('generate')], {
    description: '`instantiate`: signers are invited; `generate`: a finished, sealed file, nobody signs.',
  }),
});

const Sha256 = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });

/** An event: a short title (the reference's heading), when it fires, and its fields beside the envelope. */
const event = <P extends TProperties>(title: string, description: string, fields: P, open = false): TObject<P> =>
  Type.Object(fields, { title, description, ...(open ? { additionalProperties: true } : {}) });

export const EVENT_FIELDS = {
  'signing_request.sent': event(
    'A signer was invited',
    'A create call dispatched its invitations: one event per signer (`source: "v1_api"`). A template instance ' +
      'sent at once or confirmed: one event for the first recipient released (`source: "template_instance"`). ' +
      'Not sent again when sequential signing releases the next signer. The hook test sends a synthetic one ' +
      '(`test: true`, `signing_request_id: "req_test_synthetic"`, `document_id: "doc_test_synthetic"`).',
    {
      ...requestIds(),
      signer: EventSigner,
      locale: Type.String({ description: 'The language of the signer’s page and e-mails.' }),
      source: Type.Union([Type.Literal('v1_api'), Type.Literal('template_instance')]),
      test: Type.Optional(Type.Literal(true, { description: 'Only on the synthetic test event.' })),
    },
  ),
  'signing_request.viewed': event('A signer opened the document', 'A signer opened the signing page.', {
    ...requestIds(),
    signer: EventSignerRef,
  }),
  'signing_request.signed': event('A signer signed', 'A signer completed their signature.', {
    ...requestIds(),
    signer: EventSignerRef,
    sha256: Sha256('SHA-256 of the PDF the signer saw and signed.'),
  }),
  'signing_request.declined': event(
    'A signer declined',
    'A signer refused to sign. The document can then never complete; its other open requests are withdrawn.',
    { ...requestIds(), signer: EventSignerRef, reason: Type.String({ description: 'The reason the signer gave.' }) },
  ),
  'signing_request.expired': event(
    'A signing request expired',
    'A pending or viewed request passed its `expires_at` (the hourly expiry job): one event per such request; ' +
      'queued sequential followers expire without one.',
    {
      ...requestIds(),
      signer: EventSignerRef,
      expired_at: Type.String({ format: 'date-time', description: `The request’s \`expires_at\`: ${ISO_MS}` }),
    },
  ),
  'document.completed': event(
    'A document was completed and sealed',
    'The final signer signed, every signer row is signed, and the sealed PDF is ready. A generated template file ' +
      'completes too, without signers: `signing_request_id` and `signer` are then null.',
    {
      signing_request_id: Type.Union([Type.String(), Type.Null()], {
        description: 'The final signer’s signing request; null for a generated file.',
      }),
      document_id: Type.String({ description: 'The document (`doc_…`).' }),
      signer: Type.Union([EventSignerRef, Type.Null()], {
        description: 'The final signer; null for a generated file.',
      }),
      signed_pdf_url: Type.String({
        description: '`{base_url}/v1/documents/<document_id>/signed`: fetch it with the workspace’s API key.',
      }),
      audit_trail_url: Type.String({
        description: '`{base_url}/v1/documents/<document_id>/audit-trail`: fetch it with the workspace’s API key.',
      }),
      sha256: Sha256('SHA-256 of the sealed PDF.'),
      cert_serial: Type.String({ description: 'Serial number (hex) of the certificate that sealed it.' }),
      tsa_provider: Type.String({ description: 'Who time-stamped the seal: the TSA’s host, or `local`.' }),
      tsa_signed_at: Type.String({ format: 'date-time', description: `The time stamp’s time: ${ISO_MS}` }),
    },
  ),
  'template_instance.staged': event(
    'A template instance waits for review',
    'Instantiate or generate with `review: true` created a staged instance. Nobody is invited before it is ' +
      'confirmed; it is discarded (reason `expired`) when its 14-day review window closes.',
    {
      ...instanceFields(),
      review_url: Type.String({
        description: 'The review page; its token is the only credential, shown here and in the create answer only.',
      }),
      review_expires_at: Type.String({ format: 'date-time', description: `End of the review window: ${ISO_MS}` }),
      recipients: Type.Array(TemplateRecipient, { description: 'The staged recipients.' }),
    },
  ),
  'template_instance.confirmed': event(
    'A template instance was sent',
    'A confirm released the invitations, or finalized a generated file. An instance sent without review has one ' +
      'too (`actor: "api"`), so every instance that went out has exactly one.',
    {
      ...instanceFields(),
      actor: Type.Union([Type.Literal('api'), Type.Literal('review_page')], {
        description: 'Who sent it: the API (`api`) or the review page (`review_page`).',
      }),
      recipients: Type.Array(TemplateRecipient, {
        description: 'The recipients invited, each with its `signing_request_id`; empty for a generated file.',
      }),
    },
  ),
  'template_instance.discarded': event(
    'A template instance was discarded',
    'A staged instance was discarded by hand (`discarded`) or when its review window closed (`expired`).',
    { ...instanceFields(), reason: Type.Union([Type.Literal('discarded'), Type.Literal('expired')]) },
  ),
  // Retired with manual placement: still a name hooks may filter on (the spec lists it), but nothing emits it. The
  // spec does not show its fields beyond `document_id`, so the schema stays open.
  placement_expired: event(
    'A manual placement expired (retired)',
    'Nothing sends it any more: it belonged to manual placement, retired on 2026-07-31, and was sent when a ' +
      'placement token elapsed before review. Its fields beyond `document_id` are not specified.',
    { document_id: Type.String({ description: 'The document (`doc_…`).' }) },
    true,
  ),
};

export type EventName = keyof typeof EVENT_FIELDS;
/** What `tx.emit` takes for one event: its own fields, without the envelope. */
export type EventFields<N extends EventName> = Static<(typeof EVENT_FIELDS)[N]>;

/** The whole body of one event as a JSON schema: the envelope, then its own fields, at one level. */
export function eventBodySchema(name: EventName) {
  const fields = EVENT_FIELDS[name];
  const envelope = Type.Object(envelopeFields(name));
  return {
    ...fields,
    required: [...envelope.required, ...fields.required],
    properties: { ...envelope.properties, ...fields.properties },
  };
}

// ── Examples (the OpenAPI document's): one contract with two signers, and one template instance ────────────────────
const ex = {
  documentId: 'doc_8d3f1a2b4c6e8f0a1b3c5d7e',
  request: 'sr_1a2b3c4d5e6f7a8b9c0d1e2f',
  instanceDocumentId: 'doc_9e0f1a2b3c4d5e6f7a8b9c0d',
  instance: { instance_id: 'tin_4d5e6f7a8b9c0d1e2f3a4b5c', template_id: 'tpl_3c4d5e6f7a8b9c0d1e2f3a4b' },
  sha256: '9e098756662d14cee2cbf44353e62e8868567ad69e38d4cddc95a78b4a9e7c8c',
};
const signer = { email: 'ana@example.com', name: 'Ana Pérez' };
const recipients = [
  { slot: 'client', name: 'Ada Lovelace', email: 'ada@example.com', phone: null, channel: 'email', signing_order: 1 },
  { slot: 'provider', name: 'Grace Hopper', email: null, phone: '+14155550123', channel: 'sms', signing_order: 2 },
];
const instance = {
  ...ex.instance,
  document_id: ex.instanceDocumentId,
  template_version: 3,
  kind: 'instantiate' as const,
};

/** One example per event, its own fields only (the envelope is added where a whole body is shown). */
export const EVENT_EXAMPLES: { [N in EventName]: EventFields<N> } = {
  'signing_request.sent': {
    signing_request_id: ex.request,
    document_id: ex.documentId,
    signer: { ...signer, role: 'buyer', slot: 1 },
    locale: 'en',
    source: 'v1_api',
  },
  'signing_request.viewed': { signing_request_id: ex.request, document_id: ex.documentId, signer },
  'signing_request.signed': { signing_request_id: ex.request, document_id: ex.documentId, signer, sha256: ex.sha256 },
  'signing_request.declined': {
    signing_request_id: ex.request,
    document_id: ex.documentId,
    signer,
    reason: 'The delivery date in clause 4 is wrong.',
  },
  'signing_request.expired': {
    signing_request_id: ex.request,
    document_id: ex.documentId,
    signer,
    expired_at: '2026-12-22T10:00:00.000Z',
  },
  'document.completed': {
    signing_request_id: ex.request,
    document_id: ex.documentId,
    signer,
    signed_pdf_url: `https://signet.example.com/v1/documents/${ex.documentId}/signed`,
    audit_trail_url: `https://signet.example.com/v1/documents/${ex.documentId}/audit-trail`,
    sha256: '4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b',
    cert_serial: '5f2c9a0e71b3d8c4',
    tsa_provider: 'tsa.example.net',
    tsa_signed_at: '2026-11-23T09:30:14.000Z',
  },
  'template_instance.staged': {
    ...instance,
    review_url: 'https://signet.example.com/review/wZ1v0Rk3dY8qXn5bJt2mLc7aP4sHf9gE6uTiOy0KlMA',
    review_expires_at: '2026-12-06T10:00:00.000Z',
    recipients,
  },
  'template_instance.confirmed': {
    ...instance,
    actor: 'review_page',
    recipients: [
      { ...recipients[0]!, signing_request_id: 'sr_3c4d5e6f7a8b9c0d1e2f3a4b' },
      { ...recipients[1]!, signing_request_id: 'sr_4d5e6f7a8b9c0d1e2f3a4b5c' },
    ],
  },
  'template_instance.discarded': { ...instance, reason: 'expired' },
  placement_expired: { document_id: ex.documentId },
};

/** A whole example body: the envelope, then the event's own example fields. */
export const eventBodyExample = <N extends EventName>(name: N) => ({
  event: name,
  event_id: 'evt_0f9e8d7c6b5a49382716f5e4d3c2b1a0',
  created_at: '2026-11-22T10:00:00.000Z',
  workspace_id: 'ws_7c1e4b2a9d8f6e5c3b2a1d0e',
  ...EVENT_EXAMPLES[name],
});
