// Wire schemas of signing (TypeBox): they validate requests, serialise responses and generate the OpenAPI document;
// the service's input and output types are derived from them.
import { Type, type Static } from 'typebox';
import { FILE_BODY_LIMIT, MAX_FIELDS, MAX_SIGNERS, MAX_URL_LENGTH } from '../limits.js';
import { LocaleIn } from './locale.schemas.js';
import { EventSigner } from '../webhooks/events.schemas.js';
import { RemindersIn, RemindersOut } from './reminders.schemas.js';

const Role = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

// The examples of the OpenAPI document: one two-signer contract, seen through every route.
const ex = {
  documentId: 'doc_8d3f1a2b4c6e8f0a1b3c5d7e',
  buyer: 'sr_1a2b3c4d5e6f7a8b9c0d1e2f',
  seller: 'sr_2b3c4d5e6f7a8b9c0d1e2f3a',
  sha256: '9e098756662d14cee2cbf44353e62e8868567ad69e38d4cddc95a78b4a9e7c8c',
  created: '2026-11-22T10:00:00.000Z',
  expires: '2026-12-22T10:00:00.000Z',
};
const buyerSigner = { email: 'ana@example.com', role: 'buyer', name: 'Ana Pérez', slot: 1 };
const sellerSigner = { email: 'li@example.com', role: 'seller', name: 'Li Lei', slot: 2 };
const requestExample = {
  id: ex.buyer,
  document_id: ex.documentId,
  status: 'viewed',
  signer: buyerSigner,
  expires_at: ex.expires,
  sent_at: ex.created,
  viewed_at: '2026-11-22T10:12:31.000Z',
  signed_at: null,
  declined_at: null,
  decline_reason: null,
  qualified_signature: null,
};
/** A PDF's first bytes in base64 (a real upload is the whole file). */
const pdfBase64 = 'JVBERi0xLjcKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI+PgpzdHJlYW0K';
const Nullable = (t: ReturnType<typeof Type.String>) => Type.Union([t, Type.Null()]);
export const FileIn = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }), content_base64: Type.String({ maxLength: FILE_BODY_LIMIT }) },
  { additionalProperties: false },
);
export type FileIn = Static<typeof FileIn>;

// ── POST /v1/signing-requests ────────────────────────────────────────────────────────────────────────────────────
/** Signer verification (issue 22): what a signer proves before the document is shown. */
export const VerificationIn = Type.Union([Type.Literal('none'), Type.Literal('email_code'), Type.Literal('sms_code')], {
  description:
    'What the signer proves before the document is shown (default `none`): a six-digit code sent by e-mail ' +
    '(`email_code`) or by SMS to `phone` (`sms_code`, Enterprise only: 402 enterprise-required).',
});
export type Verification = Static<typeof VerificationIn>;
const SignerIn = Type.Object(
  {
    role: Role,
    email: Type.String({ minLength: 3, maxLength: 254 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    phone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'E.164 (like +14155550100); needed by `sms_code`.' }),
    ),
    verification: Type.Optional(VerificationIn),
  },
  { additionalProperties: false },
);
const FieldIn = Type.Object(
  {
    role: Role,
    type: Type.Union([
      Type.Literal('signature'),
      Type.Literal('initials'),
      Type.Literal('date'),
      Type.Literal('text'),
      Type.Literal('checkbox'),
    ]),
    page: Type.Integer({ minimum: 1, maximum: 100000 }),
    x: Type.Number({ description: 'points from the page’s left edge' }),
    y: Type.Number({ description: 'points from the page’s top edge' }),
    width: Type.Number(),
    height: Type.Number(),
    label: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'text and checkbox: what the signer page calls it' }),
    ),
    required: Type.Optional(
      Type.Boolean({
        description: 'text and checkbox: whether signing waits for it (text: default true; checkbox: default false)',
      }),
    ),
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
    locale: Type.Optional(LocaleIn),
    expires_at: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    reminders: Type.Optional(RemindersIn),
    signature_level: Type.Optional(
      Type.Union([Type.Literal('ses'), Type.Literal('qes')], {
        description:
          '`ses` (default): the signers’ electronic signatures under Signet’s seal. `qes` (Enterprise): each signer ' +
          'signs with their own qualified certificate through the configured provider (CSC API v2), before the seal; ' +
          'without a configured provider it answers 503 qes_unavailable.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        signers: [
          { role: 'buyer', email: buyerSigner.email, name: buyerSigner.name },
          { role: 'seller', email: sellerSigner.email, name: sellerSigner.name },
        ],
        file: { name: 'contract.pdf', content_base64: pdfBase64 },
        placement: 'anchors',
        signing_order: 'parallel',
        title: 'Purchase contract',
        message: 'Please sign by Friday.',
        locale: 'en',
        expires_at: ex.expires,
        callback_url: 'https://example.com/hooks/contract-42',
        reminders: { after_days: 3, every_days: 2 },
      },
    ],
  },
);
export type CreateBody = Static<typeof CreateBody>;

/** The signer as `signing_request.sent` shows it too (one shape: webhooks/events.schemas.ts). */
const SignerOut = Type.Object(EventSigner.properties);
export const RequestBrief = Type.Object({
  id: Type.String(),
  status: Type.String(),
  signer: SignerOut,
  expires_at: Type.String(),
});
export type RequestBrief = Static<typeof RequestBrief>;
const QualifiedOut = Type.Object({
  provider: Type.String({ description: 'The qualified trust service provider that signed for the signer.' }),
  subject: Type.String({ description: 'The signer’s qualified certificate: subject, issuer, serial (hex).' }),
  issuer: Type.String(),
  serial: Type.String(),
  signed_at: Type.String({ description: 'The signature timestamp’s time.' }),
});
export const RequestOut = Type.Object(
  {
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
    qualified_signature: Type.Union([QualifiedOut, Type.Null()], {
      description: 'Signet addition: the signer’s qualified signature (signature_level `qes`), null otherwise.',
    }),
  },
  { examples: [requestExample] },
);
export type RequestOut = Static<typeof RequestOut>;
/** The hook a `callback_url` became: its secret is in the creating call's answer only. */
export const CallbackOut = Type.Object({ hook_id: Type.String(), secret: Type.String() });
export type CallbackOut = Static<typeof CallbackOut>;

export const Created = Type.Object(
  {
    document_id: Type.String(),
    status: Type.String(),
    signing_order: Type.String(),
    expires_at: Type.String(),
    signing_requests: Type.Array(RequestBrief),
    callback: Type.Optional(CallbackOut),
    reminders: Type.Optional(RemindersOut),
  },
  {
    examples: [
      {
        document_id: ex.documentId,
        status: 'in_progress',
        signing_order: 'parallel',
        expires_at: ex.expires,
        signing_requests: [
          { id: ex.buyer, status: 'pending', signer: buyerSigner, expires_at: ex.expires },
          { id: ex.seller, status: 'pending', signer: sellerSigner, expires_at: ex.expires },
        ],
        reminders: { after_days: 3, every_days: 2 },
        callback: {
          hook_id: 'hook_7c1d9e4f2a3b5c6d8e0f1a2b',
          secret: 'whsec_Lvgo7yu7aUjWoc7PIPJujBdfXhONunnt8XehgRqBILs',
        },
      },
    ],
  },
);
export type Created = Static<typeof Created>;

// ── /v1/documents ────────────────────────────────────────────────────────────────────────────────────────────────
export const DocumentOut = Type.Object(
  {
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
    pades_level: Type.Union([Type.Literal('B-T'), Type.Literal('B-LT'), Type.Literal('B-LTA'), Type.Null()], {
      description:
        'PAdES baseline level the sealed PDF reached (Signet addition): `B-LTA` by default; lower with a `SEAL_P12` ' +
        'or external TSA whose issuer publishes no revocation data. Null until the document is completed.',
    }),
    template_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The template the document was made from (Signet addition); null for an uploaded PDF.',
    }),
    template_version: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The template version it was made from (Signet addition); null for an uploaded PDF.',
    }),
    signature_level: Type.Union([Type.Literal('ses'), Type.Literal('qes')], {
      description: 'Signet addition: `qes` when every signer signs with a qualified certificate through the provider.',
    }),
    reminders: Type.Optional(RemindersOut),
    signed_pdf_url: Type.Optional(Type.String()),
    audit_trail_url: Type.Optional(Type.String()),
    signing_requests: Type.Array(RequestOut),
  },
  {
    description: '`signed_pdf_url` and `audit_trail_url` are present once the document is completed.',
    examples: [
      {
        id: ex.documentId,
        status: 'completed',
        title: 'Purchase contract',
        locale: 'en',
        signing_order: 'parallel',
        placement: 'anchors',
        file_name: 'contract.pdf',
        page_count: 3,
        sha256: ex.sha256,
        signed_sha256: '4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b',
        created_at: ex.created,
        expires_at: ex.expires,
        completed_at: '2026-11-23T09:30:12.000Z',
        pades_level: 'B-LTA',
        template_id: null,
        template_version: null,
        signature_level: 'ses',
        reminders: { after_days: 3, every_days: 2 },
        signed_pdf_url: `https://signet.example.com/v1/documents/${ex.documentId}/signed`,
        audit_trail_url: `https://signet.example.com/v1/documents/${ex.documentId}/audit-trail`,
        signing_requests: [
          { ...requestExample, status: 'signed', signed_at: '2026-11-22T10:14:02.000Z' },
          {
            ...requestExample,
            id: ex.seller,
            signer: sellerSigner,
            status: 'signed',
            viewed_at: '2026-11-23T09:28:40.000Z',
            signed_at: '2026-11-23T09:30:12.000Z',
          },
        ],
      },
    ],
  },
);
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

const createdHash = '36cc7ee771727cde6e031b1da15bc6241004ba2726ee1a6d4ef2a066e67bbd19';
const sentHash = '950269d5668796168809c627e4e4aa3c61bc090b735f78026692cb0750b858a8';
export const AuditTrailOut = Type.Object(
  {
    document_id: Type.String(),
    status: Type.String(),
    original_sha256: Type.String(),
    signed_sha256: Type.Union([Type.String(), Type.Null()]),
    chain_valid: Type.Boolean(),
    head_hash: Type.String(),
    entries: Type.Array(AuditEntryOut),
  },
  {
    examples: [
      {
        document_id: ex.documentId,
        status: 'in_progress',
        original_sha256: ex.sha256,
        signed_sha256: null,
        chain_valid: true,
        head_hash: sentHash,
        entries: [
          {
            seq: 1,
            at: ex.created,
            action: 'document.created',
            actor: 'api_key:key_9a8b7c6d5e4f3a2b1c0d9e8f',
            signing_request_id: null,
            ip: '203.0.113.7',
            user_agent: null,
            detail: { sha256: ex.sha256, file_name: 'contract.pdf', pages: 3, placement: 'anchors' },
            prev_hash: '0'.repeat(64),
            hash: createdHash,
          },
          {
            seq: 2,
            at: ex.created,
            action: 'signing_request.sent',
            actor: 'api_key:key_9a8b7c6d5e4f3a2b1c0d9e8f',
            signing_request_id: ex.buyer,
            ip: null,
            user_agent: null,
            detail: { email: buyerSigner.email, role: 'buyer', queued: false },
            prev_hash: createdHash,
            hash: sentHash,
          },
        ],
      },
    ],
  },
);
export type AuditTrailOut = Static<typeof AuditTrailOut>;

export const PreviewBody = Type.Object(
  {
    file: Type.Optional(FileIn),
    file_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: MAX_SIGNERS })),
  },
  {
    additionalProperties: false,
    examples: [{ file: { name: 'contract.pdf', content_base64: pdfBase64 }, roles: ['buyer'] }],
  },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const PreviewOut = Type.Object(
  {
    page_count: Type.Integer(),
    anchors: Type.Array(Type.Object({}, { additionalProperties: true })),
    problems: Type.Array(Type.Object({}, { additionalProperties: true })),
  },
  {
    examples: [
      {
        page_count: 3,
        anchors: [
          { type: 'signature', role: 'buyer', page: 3, box: { x: 108.82, y: 60.6, width: 99.93, height: 14.4 } },
          { type: 'signature', role: 'seller', page: 3, box: { x: 110.5, y: 84.6, width: 96.24, height: 14.4 } },
        ],
        problems: [
          {
            code: 'unknown_role',
            message: 'An anchor on page 3 names role "seller", which no signer has.',
            meta: { role: 'seller' },
          },
        ],
      },
    ],
  },
);
