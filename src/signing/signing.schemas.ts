// Wire schemas of signing (TypeBox): they validate requests, serialise responses and generate the OpenAPI document;
// the service's input and output types are derived from them.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { FILE_BODY_LIMIT, MAX_FIELDS, MAX_SIGNERS, MAX_URL_LENGTH } from '../limits.js';

const Role = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
const Nullable = (t: ReturnType<typeof Type.String>) => Type.Union([t, Type.Null()]);
export const FileIn = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }), content_base64: Type.String({ maxLength: FILE_BODY_LIMIT }) },
  { additionalProperties: false },
);
export type FileIn = Static<typeof FileIn>;

// ── POST /v1/signing-requests ────────────────────────────────────────────────────────────────────────────────────
const SignerIn = Type.Object(
  {
    role: Role,
    email: Type.String({ minLength: 3, maxLength: 254 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);
const FieldIn = Type.Object(
  {
    role: Role,
    type: Type.Union([Type.Literal('signature'), Type.Literal('initials'), Type.Literal('date'), Type.Literal('text')]),
    page: Type.Integer({ minimum: 1, maximum: 100000 }),
    x: Type.Number({ description: 'points from the page’s left edge' }),
    y: Type.Number({ description: 'points from the page’s top edge' }),
    width: Type.Number(),
    height: Type.Number(),
  },
  { additionalProperties: false },
);
export const CreateBody = Type.Object(
  {
    signers: Type.Array(SignerIn, { minItems: 1, maxItems: MAX_SIGNERS }),
    file: Type.Optional(FileIn),
    file_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    placement: Type.Union(
      [Type.Literal('anchors'), Type.Literal('auto_append'), Type.Literal('coordinates'), Type.Literal('manual')],
      {
        description: '`manual` was retired on 2026-07-31 and answers 400 placement_retired.',
      },
    ),
    fields: Type.Optional(
      Type.Array(FieldIn, { minItems: 1, maxItems: MAX_FIELDS, description: 'placement "coordinates" only' }),
    ),
    signing_order: Type.Optional(Type.Union([Type.Literal('parallel'), Type.Literal('sequential')])),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    locale: Type.Optional(Type.String({ minLength: 1, maxLength: 35 })),
    expires_at: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    signature_level: Type.Optional(
      Type.Union([Type.Literal('ses'), Type.Literal('qes')], {
        description:
          '`ses` (default): the signers’ electronic signatures under Signet’s seal. `qes` is Enterprise-only and needs a ' +
          'qualified remote-signing provider; until one is configured it answers 503 qes_unavailable.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateBody = Static<typeof CreateBody>;

const SignerOut = Type.Object({ email: Type.String(), role: Type.String(), name: Type.String(), slot: Type.Integer() });
export const RequestBrief = Type.Object({
  id: Type.String(),
  status: Type.String(),
  signer: SignerOut,
  expires_at: Type.String(),
});
export type RequestBrief = Static<typeof RequestBrief>;
export const RequestOut = Type.Object({
  id: Type.String(),
  document_id: Type.String(),
  status: Type.String(),
  signer: SignerOut,
  expires_at: Type.String(),
  sent_at: Nullable(Type.String()),
  viewed_at: Nullable(Type.String()),
  signed_at: Nullable(Type.String()),
  declined_at: Nullable(Type.String()),
  decline_reason: Nullable(Type.String()),
});
export type RequestOut = Static<typeof RequestOut>;
export const Created = Type.Object({
  document_id: Type.String(),
  status: Type.String(),
  signing_order: Type.String(),
  expires_at: Type.String(),
  signing_requests: Type.Array(RequestBrief),
  callback: Type.Optional(Type.Object({ hook_id: Type.String(), secret: Type.String() })),
});
export type Created = Static<typeof Created>;

// ── /v1/documents ────────────────────────────────────────────────────────────────────────────────────────────────
export const DocumentOut = Type.Object({
  id: Type.String(),
  status: Type.String(),
  title: Type.String(),
  locale: Type.String(),
  signing_order: Type.String(),
  placement: Type.String(),
  file_name: Type.String(),
  page_count: Type.Integer(),
  sha256: Type.String({ description: 'SHA-256 of the original upload' }),
  signed_sha256: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  expires_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  signed_pdf_url: Type.Optional(Type.String()),
  audit_trail_url: Type.Optional(Type.String()),
  signing_requests: Type.Array(RequestOut),
});
export type DocumentOut = Static<typeof DocumentOut>;

const AuditEntryOut = Type.Object({
  seq: Type.Integer(),
  at: Type.String(),
  action: Type.String(),
  actor: Type.String(),
  signing_request_id: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  detail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  prev_hash: Type.String(),
  hash: Type.String(),
});

export const AuditTrailOut = Type.Object({
  document_id: Type.String(),
  status: Type.String(),
  original_sha256: Type.String(),
  signed_sha256: Type.Union([Type.String(), Type.Null()]),
  chain_valid: Type.Boolean(),
  head_hash: Type.String(),
  entries: Type.Array(AuditEntryOut),
});
export type AuditTrailOut = Static<typeof AuditTrailOut>;

export const PreviewBody = Type.Object(
  {
    file: Type.Optional(FileIn),
    file_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: MAX_SIGNERS })),
  },
  { additionalProperties: false },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const PreviewOut = Type.Object({
  page_count: Type.Integer(),
  anchors: Type.Array(Type.Object({}, { additionalProperties: true })),
  problems: Type.Array(Type.Object({}, { additionalProperties: true })),
});

// ── /sign/<token> ────────────────────────────────────────────────────────────────────────────────────────────────
export const TokenParam = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
export const SignBody = Type.Object(
  {
    signature: Type.Union([
      Type.Object(
        { type: Type.Literal('typed'), text: Type.String({ minLength: 1, maxLength: 200 }) },
        { additionalProperties: false },
      ),
      Type.Object(
        { type: Type.Literal('drawn'), png_base64: Type.String({ minLength: 1, maxLength: 3_000_000 }) },
        { additionalProperties: false },
      ),
    ]),
    fields: Type.Optional(
      Type.Record(Type.String({ maxLength: 20 }), Type.String({ maxLength: 1000 }), { maxProperties: MAX_FIELDS }),
    ),
  },
  { additionalProperties: false },
);
export type SignBody = Static<typeof SignBody>;
export const DeclineBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 2000 }) },
  { additionalProperties: false },
);
export const SignerActionOut = Type.Object({ status: Type.String() });
