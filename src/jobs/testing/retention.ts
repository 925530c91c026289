// Rows of every growing table, written straight into the database at chosen times, for the prune tests and the
// prune bench: a workspace, a user, a hook, one live and one ended document, then events, deliveries and the rest.
import type { Db } from '../../db/db.js';

export const WS = 'ws_retention';
export const USER = 'usr_retention';
export const HOOK = 'hook_retention';
export const LIVE_DOC = 'doc_live';
export const ENDED_DOC = 'doc_ended';

const doc = (id: string, status: string, at: number) => ({
  id,
  workspace_id: WS,
  title: id,
  locale: 'en',
  status,
  signing_order: 'parallel',
  placement: 'anchors',
  file_name: 'a.pdf',
  page_count: 1,
  fields: '[]',
  original_sha256: 'x',
  original_blob: 'x',
  prepared_sha256: 'x',
  prepared_blob: 'x',
  seal_state: status === 'completed' ? 'done' : 'none',
  seal_attempts: 0,
  expires_at: at + 86_400_000,
  created_at: at,
  updated_at: at,
});

/** The rows everything else hangs off, created at `at`. */
export async function seedBase(db: Db, at: number): Promise<void> {
  const k = db.kysely;
  await k
    .insertInto('workspaces')
    .values({ id: WS, name: 'Retention', slug: WS, tier: 'business', reply_to: null, created_at: at } as never)
    .execute();
  await k
    .insertInto('users')
    .values({ id: USER, email: 'r@example.test', password_hash: null, created_at: at })
    .execute();
  await k
    .insertInto('hooks')
    .values({
      id: HOOK,
      workspace_id: WS,
      target_url: 'https://example.test/h',
      events: '[]',
      secret: 'whsec_x',
      document_id: null,
      source: 'api',
      created_at: at,
      deleted_at: null,
    })
    .execute();
  await k
    .insertInto('documents')
    .values([doc(LIVE_DOC, 'in_progress', at), doc(ENDED_DOC, 'completed', at)] as never)
    .execute();
}

export const insertEvent = (db: Db, id: string, at: number, documentId: string | null = null) =>
  db.kysely
    .insertInto('events')
    .values({ id, workspace_id: WS, name: 'signing_request.sent', document_id: documentId, body: '{}', created_at: at })
    .execute();

/** A delivery of `eventId` in `status`, last written at `updatedAt`, with `attempts` attempts started before it. */
export async function insertDelivery(
  db: Db,
  id: string,
  eventId: string,
  status: string,
  updatedAt: number,
  attempts = 1,
): Promise<void> {
  await db.kysely
    .insertInto('deliveries')
    .values({
      id,
      event_id: eventId,
      hook_id: HOOK,
      workspace_id: WS,
      status,
      attempts,
      next_attempt_at: status === 'succeeded' || status === 'giving_up' ? null : updatedAt + 60_000,
      last_status_code: 200,
      last_error: null,
      created_at: updatedAt - attempts,
      updated_at: updatedAt,
    })
    .execute();
  for (let n = 1; n <= attempts; n++) {
    await db.kysely
      .insertInto('delivery_attempts')
      .values({
        delivery_id: id,
        attempt: n,
        started_at: updatedAt - attempts + n - 1,
        duration_ms: 1,
        status_code: 200,
        response_body: null,
        error: null,
        worker: 'w',
      })
      .execute();
  }
}

const outboxRow = (id: string, status: string, sentAt: number | null, documentId: string | null) => ({
  id,
  workspace_id: WS,
  document_id: documentId,
  signing_request_id: null,
  template: 'invite',
  locale: 'en',
  status,
  attempts: 1,
  next_attempt_at: null,
  claimed_by: null,
  claim_expires_at: null,
  last_error: null,
  created_at: (sentAt ?? 0) - 1,
  updated_at: sentAt ?? 0,
  sent_at: sentAt,
});

export const insertMail = (
  db: Db,
  id: string,
  status: string,
  sentAt: number | null,
  documentId: string | null = null,
) =>
  db.kysely
    .insertInto('mail_outbox')
    .values({
      ...outboxRow(id, status, sentAt, documentId),
      to_email: 'a@example.test',
      to_name: 'A',
      from_name: 'S',
      reply_to: null,
      subject: 's',
      text: 't',
      html: 'h',
      message_id: null,
    })
    .execute();

export const insertSms = (
  db: Db,
  id: string,
  status: string,
  sentAt: number | null,
  documentId: string | null = null,
) =>
  db.kysely
    .insertInto('sms_outbox')
    .values({ ...outboxRow(id, status, sentAt, documentId), to_phone: '+15550001111', body: 'b', provider_id: null })
    .execute();

export const insertKeyUse = (db: Db, at: number, keyId = 'key_r') =>
  db.kysely
    .insertInto('key_uses')
    .values({ key_id: keyId, workspace_id: WS, at, ip_masked: null, method: 'GET', route: '/v1/me', status: 200 })
    .execute();

/** Ids (or another column) of a table's rows, sorted, for exact comparisons. */
export async function idsOf(db: Db, table: string, column = 'id'): Promise<string[]> {
  const rows = await (db.kysely as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>)
    .selectFrom(table)
    .select(column)
    .execute();
  return rows.map((r) => String(r[column])).sort();
}
