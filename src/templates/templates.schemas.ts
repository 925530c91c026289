// Wire schemas of templates and template instances (TypeBox): they validate requests, serialise responses and
// generate the OpenAPI document; the service's types are derived from them.
import { Type, type Static } from '@fastify/type-provider-typebox';
import {
  MAX_ANCHOR_LENGTH,
  MAX_FIELD_KEY_LENGTH,
  MAX_FIELD_VALUE_LENGTH,
  MAX_FIELDS,
  MAX_PATTERN_LENGTH,
  MAX_SIGNERS,
  MAX_URL_LENGTH,
} from '../limits.js';
import { FileIn } from '../signing/signing.schemas.js';

/** The slot name of fields the sender fills from `field_values`. */
export const SENDER_SLOT = 'sender';

export const TEMPLATE_FIELD_TYPES = [
  'text',
  'number',
  'date',
  'checkbox',
  'enum',
  'signature',
  'initials',
  'email',
] as const;
export type TemplateFieldType = (typeof TEMPLATE_FIELD_TYPES)[number];

const FieldType = Type.Union([
  Type.Literal('text'),
  Type.Literal('number'),
  Type.Literal('date'),
  Type.Literal('checkbox'),
  Type.Literal('enum'),
  Type.Literal('signature'),
  Type.Literal('initials'),
  Type.Literal('email'),
]);

const SlotName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
const Box = Type.Object(
  {
    x: Type.Number({ description: 'points from the page’s left edge' }),
    y: Type.Number({ description: 'points from the page’s top edge' }),
    width: Type.Number(),
    height: Type.Number(),
  },
  { additionalProperties: false },
);
const Scalar = Type.Union([Type.String({ maxLength: MAX_FIELD_VALUE_LENGTH }), Type.Number(), Type.Boolean()]);

export const TemplateFieldIn = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: MAX_FIELD_KEY_LENGTH, pattern: '^[A-Za-z0-9_.-]+$' }),
    type: FieldType,
    slot: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'a slot name, or "sender" (filled from field_values)',
    }),
    required: Type.Optional(Type.Boolean()),
    label: Type.Optional(Type.String({ maxLength: 200 })),
    options: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 })),
    pattern: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PATTERN_LENGTH })),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_FIELD_VALUE_LENGTH })),
    default: Type.Optional(Scalar),
    readonly: Type.Optional(Type.Boolean()),
    anchor: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_ANCHOR_LENGTH, description: 'marker text found in the PDF' }),
    ),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000 })),
    box: Type.Optional(Box),
  },
  { additionalProperties: false },
);
export type TemplateFieldIn = Static<typeof TemplateFieldIn>;

export const SlotIn = Type.Object(
  { name: SlotName, signing_order: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) },
  { additionalProperties: false },
);
export type SlotIn = Static<typeof SlotIn>;

const versionBody = {
  file: Type.Optional(FileIn),
  file_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
  slots: Type.Array(SlotIn, { maxItems: MAX_SIGNERS }),
  fields: Type.Array(TemplateFieldIn, { minItems: 1, maxItems: MAX_FIELDS }),
};
export const CreateTemplateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), ...versionBody },
  { additionalProperties: false },
);
export type CreateTemplateBody = Static<typeof CreateTemplateBody>;
export const VersionBody = Type.Object(versionBody, { additionalProperties: false });
export type VersionBody = Static<typeof VersionBody>;

/** A field as published: the definition plus where it landed (page and box, in points from the top-left). */
export const TemplateFieldOut = Type.Object({
  key: Type.String(),
  type: FieldType,
  slot: Type.String(),
  required: Type.Boolean(),
  label: Type.Optional(Type.String()),
  options: Type.Optional(Type.Array(Type.String())),
  pattern: Type.Optional(Type.String()),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  max_length: Type.Optional(Type.Integer()),
  default: Type.Optional(Scalar),
  readonly: Type.Boolean(),
  anchor: Type.Optional(Type.String()),
  page: Type.Integer(),
  box: Box,
});
export type TemplateFieldOut = Static<typeof TemplateFieldOut>;
const SlotOut = Type.Object({ name: Type.String(), signing_order: Type.Integer() });
export type SlotOut = Static<typeof SlotOut>;

export const TemplateOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  current_version: Type.Integer(),
  slots: Type.Array(SlotOut),
  fields: Type.Array(TemplateFieldOut),
  page_count: Type.Integer(),
  archived_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type TemplateOut = Static<typeof TemplateOut>;
export const TemplateList = Type.Object({ data: Type.Array(TemplateOut) });

export const VersionOut = Type.Object({
  template_id: Type.String(),
  version: Type.Integer(),
  file_name: Type.String(),
  page_count: Type.Integer(),
  sha256: Type.String(),
  slots: Type.Array(SlotOut),
  fields: Type.Array(TemplateFieldOut),
  created_at: Type.String(),
});
export type VersionOut = Static<typeof VersionOut>;
export const VersionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  n: Type.String({ pattern: '^[1-9][0-9]{0,6}$', description: 'version number' }),
});

// ── Instances ────────────────────────────────────────────────────────────────────────────────────────────────────
export const RecipientIn = Type.Object(
  {
    slot: Type.String({ minLength: 1, maxLength: 64 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
    phone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    channel: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('sms')])),
    signing_order: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);
export type RecipientIn = Static<typeof RecipientIn>;
const Recipients = Type.Array(RecipientIn, { maxItems: MAX_SIGNERS });
const FieldValues = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: MAX_FIELDS });

export const InstantiateBody = Type.Object(
  {
    recipients: Recipients,
    field_values: Type.Optional(FieldValues),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    review: Type.Optional(Type.Boolean()),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    locale: Type.Optional(Type.String({ minLength: 1, maxLength: 35 })),
    expires_at: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
  },
  { additionalProperties: false },
);
export type InstantiateBody = Static<typeof InstantiateBody>;

export const GenerateBody = Type.Object(
  {
    field_values: Type.Optional(FieldValues),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    review: Type.Optional(Type.Boolean()),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
  },
  { additionalProperties: false },
);
export type GenerateBody = Static<typeof GenerateBody>;

export const ConfirmBody = Type.Object({ recipients: Type.Optional(Recipients) }, { additionalProperties: false });
export type ConfirmBody = Static<typeof ConfirmBody>;

export const RecipientOut = Type.Object({
  slot: Type.String(),
  name: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  channel: Type.String(),
  signing_order: Type.Integer(),
  signing_request_id: Type.Optional(Type.String()),
});
export type RecipientOut = Static<typeof RecipientOut>;

export const InstanceOut = Type.Object({
  id: Type.String(),
  status: Type.String(),
  kind: Type.String(),
  template_id: Type.String(),
  template_version: Type.Integer(),
  document_id: Type.String(),
  recipients: Type.Array(RecipientOut),
  review_url: Type.Optional(Type.String()),
  review_expires_at: Type.Optional(Type.String()),
  confirmed_at: Type.Union([Type.String(), Type.Null()]),
  confirmed_by: Type.Union([Type.String(), Type.Null()]),
  discarded_at: Type.Union([Type.String(), Type.Null()]),
  discard_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});
export type InstanceOut = Static<typeof InstanceOut>;

export const InstanceCreated = Type.Object({
  template_instance: InstanceOut,
  callback: Type.Optional(Type.Object({ hook_id: Type.String(), secret: Type.String() })),
});
export type InstanceCreated = Static<typeof InstanceCreated>;
