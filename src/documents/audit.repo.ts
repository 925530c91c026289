// Per-document audit trail as a hash chain: every entry carries the SHA-256 of the previous entry (a fixed genesis
// value for the first), and its own hash covers its content plus that link, so editing, removing or reordering any
// entry breaks every later hash. Appends run inside the caller's transaction after the document row is locked.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { sha256Hex } from '../lib/crypto.js';
import { iso } from '../lib/clock.js';

export const GENESIS_HASH = '0'.repeat(64);

export type AuditInput = {
  documentId: string;
  workspaceId: string;
  action: string;
  /** `api_key:<label>`, `signer:<email>` or `system`. */
  actor: string;
  signingRequestId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  detail?: Record<string, unknown> | null;
};

export type AuditEntry = {
  seq: number;
  at: string;
  action: string;
  actor: string;
  signing_request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  detail: Record<string, unknown> | null;
  prev_hash: string;
  hash: string;
};

/** The exact bytes hashed for an entry: a fixed field order, so a verifier can recompute it from the JSON. */
export function entryHash(documentId: string, e: Omit<AuditEntry, 'hash'>): string {
  const content = JSON.stringify([
    documentId,
    e.seq,
    e.at,
    e.action,
    e.actor,
    e.signing_request_id,
    e.ip,
    e.user_agent,
    e.detail,
  ]);
  return sha256Hex(`${e.prev_hash}\n${content}`);
}

export async function appendAudit(trx: Kysely<Database>, input: AuditInput, now: number): Promise<AuditEntry> {
  const last = await trx
    .selectFrom('audit_events')
    .select(['seq', 'hash'])
    .where('document_id', '=', input.documentId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const base = {
    seq: (last?.seq ?? 0) + 1,
    at: iso(now),
    action: input.action,
    actor: input.actor,
    signing_request_id: input.signingRequestId ?? null,
    ip: input.ip ?? null,
    user_agent: input.userAgent ? input.userAgent.slice(0, 512) : null,
    detail: input.detail ?? null,
    prev_hash: last?.hash ?? GENESIS_HASH,
  };
  const entry: AuditEntry = { ...base, hash: entryHash(input.documentId, base) };
  await trx
    .insertInto('audit_events')
    .values({
      document_id: input.documentId,
      workspace_id: input.workspaceId,
      seq: entry.seq,
      action: entry.action,
      actor: entry.actor,
      signing_request_id: entry.signing_request_id,
      ip: entry.ip,
      user_agent: entry.user_agent,
      detail: entry.detail === null ? null : JSON.stringify(entry.detail),
      at: now,
      prev_hash: entry.prev_hash,
      hash: entry.hash,
    })
    .execute();
  return entry;
}

export async function listAudit(db: Kysely<Database>, documentId: string): Promise<AuditEntry[]> {
  const rows = await db
    .selectFrom('audit_events')
    .selectAll()
    .where('document_id', '=', documentId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    seq: r.seq,
    at: iso(r.at),
    action: r.action,
    actor: r.actor,
    signing_request_id: r.signing_request_id,
    ip: r.ip,
    user_agent: r.user_agent,
    detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>),
    prev_hash: r.prev_hash,
    hash: r.hash,
  }));
}

/** Recomputes the chain; returns the seq of the first broken entry, or null when intact. */
export function verifyChain(documentId: string, entries: AuditEntry[]): number | null {
  let prev = GENESIS_HASH;
  for (const e of entries) {
    const { hash, ...rest } = e;
    if (e.prev_hash !== prev || entryHash(documentId, rest) !== hash) return e.seq;
    prev = hash;
  }
  return null;
}
