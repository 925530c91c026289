// Wire schemas of template instances (TypeBox): instantiate, generate, confirm, and the instance as answered.
import { Type, type Static } from 'typebox';
import { MAX_FIELDS, MAX_SIGNERS, MAX_URL_LENGTH } from '../limits.js';
import { RemindersIn } from '../signing/reminders.schemas.js';
import { LocaleIn } from '../signing/locale.schemas.js';
import { CallbackOut, VerificationIn } from '../signing/signing.schemas.js';
import { TemplateRecipient } from '../webhooks/events.schemas.js';
import { ex } from './templates.schemas.js';

// The examples go on with templates.schemas.ts's services agreement (`ex`).
const recipientsInExample = [
  { slot: 'client', name: 'Ada Lovelace', email: 'ada@example.com' },
  { slot: 'provider', name: 'Grace Hopper', email: 'grace@example.com' },
];
const fieldValuesExample = { client_name: 'Ada Lovelace Ltd', plan: 'pro' };
const recipientsOutExample = [
  { slot: 'client', name: 'Ada Lovelace', email: 'ada@example.com', phone: null, channel: 'email', signing_order: 1 },
  {
    slot: 'provider',
    name: 'Grace Hopper',
    email: 'grace@example.com',
    phone: null,
    channel: 'email',
    signing_order: 2,
  },
];
const stagedExample = {
  id: ex.instanceId,
  status: 'staged',
  kind: 'instantiate',
  template_id: ex.templateId,
  template_version: 1,
  document_id: ex.documentId,
  recipients: recipientsOutExample,
  confirmed_at: null,
  confirmed_by: null,
  discarded_at: null,
  discard_reason: null,
  created_at: ex.created,
  review_expires_at: '2026-12-06T10:00:00.000Z',
};

export const RecipientIn = Type.Object(
  {
    slot: Type.String({ minLength: 1, maxLength: 64 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
    phone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    channel: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('sms')])),
    signing_order: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    verification: Type.Optional(VerificationIn),
  },
  { additionalProperties: false },
);
export type RecipientIn = Static<typeof RecipientIn>;
const Recipients = Type.Array(RecipientIn, { maxItems: MAX_SIGNERS });
const Review = Type.Optional(
  Type.Boolean({
    description:
      'true: stage the instance for review (a 14-day window to confirm or discard) instead of releasing it. A ' +
      'deployment may switch staging off (`SIGNET_REVIEW_STAGING=0`): `review: true` then answers 503 ' +
      '`review_unavailable` without `Retry-After` (it will not come back by waiting) and creates nothing; without ' +
      '`review` the call works as usual.',
  }),
);
const FieldValues = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: MAX_FIELDS });

export const InstantiateBody = Type.Object(
  {
    recipients: Recipients,
    field_values: Type.Optional(FieldValues),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    review: Review,
    title: Type.Optional(Type.String({ maxLength: 200 })),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    locale: Type.Optional(LocaleIn),
    expires_at: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    reminders: Type.Optional(RemindersIn),
  },
  {
    additionalProperties: false,
    examples: [
      {
        recipients: recipientsInExample,
        field_values: fieldValuesExample,
        review: true,
        locale: 'en',
        reminders: { after_days: 3, every_days: 2 },
      },
    ],
  },
);
export type InstantiateBody = Static<typeof InstantiateBody>;

export const GenerateBody = Type.Object(
  {
    field_values: Type.Optional(FieldValues),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    review: Review,
    title: Type.Optional(Type.String({ maxLength: 200 })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
  },
  {
    additionalProperties: false,
    examples: [{ field_values: fieldValuesExample, version: 1, title: 'Services agreement: Ada Lovelace Ltd' }],
  },
);
export type GenerateBody = Static<typeof GenerateBody>;

export const ConfirmBody = Type.Object(
  { recipients: Type.Optional(Recipients) },
  {
    additionalProperties: false,
    description: 'Optional replacement recipients, validated again; without them the staged ones are invited.',
    examples: [
      {
        recipients: [
          { slot: 'client', name: 'Ada Lovelace', email: 'ada.lovelace@example.com' },
          recipientsInExample[1],
        ],
      },
    ],
  },
);
export type ConfirmBody = Static<typeof ConfirmBody>;

/** A recipient as the `template_instance.*` events show it too (one shape: webhooks/events.schemas.ts). */
export const RecipientOut = Type.Object(TemplateRecipient.properties);
export type RecipientOut = Static<typeof RecipientOut>;

export const InstanceOut = Type.Object(
  {
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
  },
  {
    examples: [
      {
        ...stagedExample,
        status: 'confirmed',
        recipients: [
          { ...recipientsOutExample[0], signing_request_id: 'sr_3c4d5e6f7a8b9c0d1e2f3a4b' },
          { ...recipientsOutExample[1], signing_request_id: 'sr_4d5e6f7a8b9c0d1e2f3a4b5c' },
        ],
        confirmed_at: '2026-11-22T11:20:00.000Z',
        confirmed_by: 'api',
      },
    ],
  },
);
export type InstanceOut = Static<typeof InstanceOut>;

export const InstanceCreated = Type.Object(
  {
    template_instance: InstanceOut,
    callback: Type.Optional(CallbackOut),
  },
  {
    examples: [
      {
        template_instance: {
          ...stagedExample,
          review_url: 'https://signet.example.com/review/wZ1v0Rk3dY8qXn5bJt2mLc7aP4sHf9gE6uTiOy0KlMA',
        },
      },
    ],
  },
);
export type InstanceCreated = Static<typeof InstanceCreated>;
