// Transactional outbox: an event row and one delivery row per matching hook are written in the caller's
// transaction, so a state change and its webhooks commit (or roll back) together. The dispatcher sends later.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { newOrderedId } from '../lib/ids.js';
import type { DeliveryStatus } from './states.js';
import { buildEnvelope, type EventFields, type EventName } from './events.js';

export type EmitOptions = {
  /** The document the event is about; document-scoped hooks of other documents never match. */
  documentId?: string | null;
  /** Deliver to this hook only (the test event). */
  onlyHookId?: string;
};

/** Writes one event; its fields are typed by its name (events.schemas.ts). */
export type Emit = <N extends EventName>(
  trx: Kysely<Database>,
  name: N,
  workspaceId: string,
  fields: EventFields<N>,
  opts?: EmitOptions,
) => Promise<{ eventId: string; deliveries: number }>;

/** A delivery row due now, attempt 1 (`pending`); the one shape both emitting and replaying write. */
export const pendingDelivery = (eventId: string, hookId: string, workspaceId: string, now: number) => ({
  id: newOrderedId('del'),
  event_id: eventId,
  hook_id: hookId,
  workspace_id: workspaceId,
  status: 'pending' satisfies DeliveryStatus,
  attempts: 0,
  next_attempt_at: now,
  last_status_code: null,
  last_error: null,
  created_at: now,
  updated_at: now,
});

export function createEmitter(clock: Clock): Emit {
  return async (trx, name, workspaceId, fields, opts = {}) => {
    const now = clock.now();
    const documentId = opts.documentId ?? fields.document_id;
    const env = buildEnvelope(name, workspaceId, fields, now);
    await trx
      .insertInto('events')
      .values({ id: env.id, workspace_id: workspaceId, name, document_id: documentId, body: env.body, created_at: now })
      .execute();

    const live = () =>
      trx
        .selectFrom('hooks')
        .select(['id', 'events', 'document_id'])
        .where('workspace_id', '=', workspaceId)
        .where('deleted_at', 'is', null);
    // The workspace's hooks and this document's own, each an index seek: every document's callback hook is a row of
    // its workspace, so reading them all per event would grow with the history.
    let q = opts.onlyHookId ? live().where('id', '=', opts.onlyHookId) : live().where('document_id', 'is', null);
    if (!opts.onlyHookId && documentId) q = q.unionAll(live().where('document_id', '=', documentId));
    const hooks = await q.execute();
    const rows = hooks
      .filter((h) => opts.onlyHookId || h.document_id === null || h.document_id === documentId)
      .filter((h) => {
        const names = JSON.parse(h.events) as string[];
        return opts.onlyHookId || names.length === 0 || names.includes(name);
      })
      .map((h) => pendingDelivery(env.id, h.id, workspaceId, now));
    if (rows.length > 0) await trx.insertInto('deliveries').values(rows).execute();
    return { eventId: env.id, deliveries: rows.length };
  };
}
