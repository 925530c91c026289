// The answer of DELETE /v1/documents/{id}: the purged document's tombstone, the same on every repeat.
import { Type, type Static } from 'typebox';

const Nullable = (t: ReturnType<typeof Type.String>) => Type.Union([t, Type.Null()]);

export const PurgedOut = Type.Object(
  {
    id: Type.String(),
    status: Type.Literal('purged'),
    ended_status: Type.String({ description: 'The status the document ended in (completed, declined, …).' }),
    original_sha256: Type.String(),
    signed_sha256: Nullable(Type.String({ description: 'SHA-256 of the sealed PDF; null if it never completed.' })),
    audit_last_hash: Nullable(Type.String({ description: 'The last hash of its audit chain.' })),
    completed_at: Nullable(Type.String()),
    ended_at: Nullable(Type.String()),
    purged_at: Type.String(),
  },
  {
    examples: [
      {
        id: 'doc_8d3f1a2b4c6e8f0a1b3c5d7e',
        status: 'purged',
        ended_status: 'completed',
        original_sha256: '9f2c0e1d4b7a6c5e3f8a1b2c4d6e8f0a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e',
        signed_sha256: '4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b',
        audit_last_hash: '0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d',
        completed_at: '2026-11-23T09:30:12.000Z',
        ended_at: '2026-11-23T09:30:12.000Z',
        purged_at: '2027-02-21T10:00:00.000Z',
      },
    ],
  },
);
export type PurgedOut = Static<typeof PurgedOut>;
