// Wire schemas of templates and their versions (TypeBox; instances: instances.schemas.ts): they validate requests,
// serialise responses and generate the OpenAPI document; the service's types are derived from them.
import { Type, type Static } from 'typebox';
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

// The examples of the OpenAPI document: one services agreement with a client and a provider, through every route.
export const ex = {
  templateId: 'tpl_3c4d5e6f7a8b9c0d1e2f3a4b',
  instanceId: 'tin_4d5e6f7a8b9c0d1e2f3a4b5c',
  documentId: 'doc_9e0f1a2b3c4d5e6f7a8b9c0d',
  created: '2026-11-22T10:00:00.000Z',
};
const slotsExample = [
  { name: 'client', signing_order: 1 },
  { name: 'provider', signing_order: 2 },
];
const fieldsInExample = [
  { key: 'client_name', type: 'text', slot: 'sender', required: true, anchor: '{{client_name}}', max_length: 80 },
  { key: 'plan', type: 'enum', slot: 'sender', required: true, options: ['basic', 'pro'], anchor: '{{plan}}' },
  { key: 'sig_client', type: 'signature', slot: 'client', anchor: '{{sig_client}}' },
  {
    key: 'sig_provider',
    type: 'signature',
    slot: 'provider',
    page: 2,
    box: { x: 320, y: 640, width: 180, height: 40 },
  },
];
const fieldsOutExample = [
  {
    key: 'client_name',
    type: 'text',
    slot: 'sender',
    required: true,
    readonly: false,
    page: 1,
    box: { x: 113.07, y: 79, width: 150, height: 20 },
    max_length: 80,
    anchor: '{{client_name}}',
  },
  {
    key: 'plan',
    type: 'enum',
    slot: 'sender',
    required: true,
    readonly: false,
    page: 1,
    box: { x: 101.74, y: 103, width: 150, height: 20 },
    options: ['basic', 'pro'],
    anchor: '{{plan}}',
  },
  {
    key: 'sig_client',
    type: 'signature',
    slot: 'client',
    required: true,
    readonly: false,
    page: 2,
    box: { x: 150.2, y: 631, width: 180, height: 40 },
    anchor: '{{sig_client}}',
  },
  {
    key: 'sig_provider',
    type: 'signature',
    slot: 'provider',
    required: true,
    readonly: false,
    page: 2,
    box: { x: 320, y: 640, width: 180, height: 40 },
  },
];
const templateExample = {
  id: ex.templateId,
  name: 'Services agreement',
  current_version: 1,
  slots: slotsExample,
  fields: fieldsOutExample,
  page_count: 2,
  archived_at: null,
  created_at: ex.created,
  updated_at: ex.created,
};
const fileExample = {
  name: 'agreement.pdf',
  content_base64: 'JVBERi0xLjcKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI+PgpzdHJlYW0K',
};

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
  {
    additionalProperties: false,
    examples: [{ name: 'Services agreement', file: fileExample, slots: slotsExample, fields: fieldsInExample }],
  },
);
export type CreateTemplateBody = Static<typeof CreateTemplateBody>;
export const VersionBody = Type.Object(versionBody, {
  additionalProperties: false,
  description: 'Without `file` or `file_url`, the new version keeps the current PDF.',
  examples: [{ slots: slotsExample, fields: fieldsInExample }],
});
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

export const TemplateOut = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    current_version: Type.Integer(),
    slots: Type.Array(SlotOut),
    fields: Type.Array(TemplateFieldOut),
    page_count: Type.Integer(),
    archived_at: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { examples: [templateExample] },
);
export type TemplateOut = Static<typeof TemplateOut>;
export const TemplateList = Type.Object({ data: Type.Array(TemplateOut) }, { examples: [{ data: [templateExample] }] });

export const VersionOut = Type.Object(
  {
    template_id: Type.String(),
    version: Type.Integer(),
    file_name: Type.String(),
    page_count: Type.Integer(),
    sha256: Type.String(),
    slots: Type.Array(SlotOut),
    fields: Type.Array(TemplateFieldOut),
    created_at: Type.String(),
  },
  {
    examples: [
      {
        template_id: ex.templateId,
        version: 1,
        file_name: 'agreement.pdf',
        page_count: 2,
        sha256: '6fbb653147076262671cfa904af765de8b03500afa30f9151b9630a75ba7ac2b',
        slots: slotsExample,
        fields: fieldsOutExample,
        created_at: ex.created,
      },
    ],
  },
);
export type VersionOut = Static<typeof VersionOut>;
export const VersionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  n: Type.String({ pattern: '^[1-9][0-9]{0,6}$', description: 'version number' }),
});
