// The verification report on the wire (POST /v1/verifications; the /verify page and `signet verify --json` print
// the same object).
import { Type, type Static } from 'typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const SignatureOut = Type.Object({
  kind: Type.Union([Type.Literal('signature'), Type.Literal('document_timestamp')]),
  field: Type.String({ description: 'The signature field’s name.' }),
  intact: Type.Boolean({ description: 'The digest over its byte range matches and its CMS signature verifies.' }),
  signer: Type.Union([
    Type.Object({ subject: Type.String(), issuer: Type.String(), serial: Type.String() }),
    Type.Null(),
  ]),
  signed_at: Nullable(Type.String({ description: 'Proven by a timestamp when `time_proven`, else claimed.' })),
  time_proven: Type.Boolean(),
  trusted: Type.Boolean({
    description:
      'Its certificate path reaches a trusted anchor (this instance’s CAs and any configured anchors) at the time ' +
      'that proves it.',
  }),
  level: Type.Union([Type.Literal('qes'), Type.Literal('advanced'), Type.Null()], {
    description:
      '`qes`: a qualified electronic signature: intact, trusted, made with a qualified certificate on a qualified ' +
      'device (QC statements QcCompliance and QcSSCD); `advanced`: any other signature, Signet’s seal included; ' +
      'null for a document timestamp.',
  }),
  problems: Type.Array(Type.String(), { description: 'What is wrong or unknown, in plain words (English).' }),
  problem_codes: Type.Array(Type.String(), { description: 'The same problems as stable codes.' }),
});

export const VerificationOut = Type.Object({
  verdict: Type.Union([Type.Literal('valid'), Type.Literal('invalid'), Type.Literal('indeterminate')]),
  pades_level: Type.Union([
    Type.Literal('B-B'),
    Type.Literal('B-T'),
    Type.Literal('B-LT'),
    Type.Literal('B-LTA'),
    Type.Null(),
  ]),
  modified_after_signing: Type.Boolean({
    description: 'A revision after the last signature changes more than DSS and document timestamps.',
  }),
  sha256: Type.String({ description: 'SHA-256 of the file as received.' }),
  document: Type.Union([
    Type.Object({
      id: Type.String(),
      title: Type.String(),
      completed_at: Nullable(Type.String()),
      audit_chain_valid: Type.Boolean(),
      purged_at: Nullable(
        Type.String({
          description:
            'Set when the document’s record was purged (DELETE /v1/documents/{id} or its workspace’s retention): ' +
            'the file was sealed by this service, but its title and audit chain are gone (`title` is empty and ' +
            '`audit_chain_valid` false).',
        }),
      ),
    }),
    Type.Null(),
  ]),
  problems: Type.Array(Type.String()),
  problem_codes: Type.Array(Type.String()),
  signatures: Type.Array(SignatureOut),
});
export type VerificationOut = Static<typeof VerificationOut>;

export const VerificationResponse = Type.Object(
  { verification: VerificationOut },
  {
    examples: [
      {
        verification: {
          verdict: 'valid',
          pades_level: 'B-LTA',
          modified_after_signing: false,
          sha256: '4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b',
          document: {
            id: 'doc_8d3f1a2b4c6e8f0a1b3c5d7e',
            title: 'Purchase contract',
            completed_at: '2026-11-23T09:30:12.000Z',
            audit_chain_valid: true,
            purged_at: null,
          },
          problems: [],
          problem_codes: [],
          signatures: [
            {
              kind: 'signature',
              field: 'Signature1',
              intact: true,
              signer: {
                subject: 'CN=Anna Berger, O=Example Customers, C=DE',
                issuer: 'CN=Example QTSP Qualified CA, O=Example QTSP, C=DE',
                serial: '2001',
              },
              signed_at: '2026-11-23T09:29:47.000Z',
              time_proven: true,
              trusted: true,
              level: 'qes',
              problems: [],
              problem_codes: [],
            },
            {
              kind: 'signature',
              field: 'Signature2',
              intact: true,
              signer: {
                subject: 'CN=Signet Document Seal, OU=Installation 1a2b3c4d, O=Signet',
                issuer: 'CN=Signet Local CA, OU=Installation 1a2b3c4d, O=Signet',
                serial: '5f2c9a0e71b3d8c4',
              },
              signed_at: '2026-11-23T09:30:12.000Z',
              time_proven: true,
              trusted: true,
              level: 'advanced',
              problems: [],
              problem_codes: [],
            },
            {
              kind: 'document_timestamp',
              field: 'Signet document timestamp 1',
              intact: true,
              signer: {
                subject: 'CN=Signet Local TSA, OU=Installation 1a2b3c4d, O=Signet',
                issuer: 'CN=Signet Local CA, OU=Installation 1a2b3c4d, O=Signet',
                serial: '3e8a1c5f90b2d7e6',
              },
              signed_at: '2026-11-23T09:30:13.000Z',
              time_proven: true,
              trusted: true,
              level: null,
              problems: [],
              problem_codes: [],
            },
          ],
        },
      },
    ],
  },
);
