// Webhook subscriptions as the API, the CLI and signing use them, the delivery history and replay. Guarantees: a
// hook is created only with a target that passes the outbound rule and a filter of known event names (at most
// MAX_HOOK_EVENTS); a list answer is never stale (it is cached only while the change probe shows the hooks
// unchanged, since GET /v1/hooks is the API's hottest read); history and replay reach only a live hook of
// the caller's workspace and its own deliveries, and a replay re-sends the same event (same id and body). An
// operator's change (the dashboard names its `actor`) writes its audit_log row in the change's own transaction.
import type { Keyring } from '../lib/secret-box.js';
import type { Kysely } from 'kysely';
import { recordAudit, type AuditRow } from '../audit/audit-log.repo.js';
import type { Db } from '../db/db.js';
import type { Database } from '../db/schema.js';
import { createExactCache } from '../db/exact-cache.js';
import type { Clock } from '../lib/clock.js';
import { apiError } from '../lib/errors.js';
import { checkOutboundUrl } from '../lib/outbound.js';
import { MAX_HOOK_EVENTS } from '../limits.js';
import { findDeliveries, findDelivery, findDeliveryRow, insertReplay, type DeliveryQuery } from './history.repo.js';
import type { DeliveryStatus } from './states.js';
import { isEventName, testEventFields } from './events.js';
import { createHook, deleteHook, findHook, listHooks, type Hook } from './hooks.repo.js';
import {
  DELIVERY_FILTERS,
  type CreateHookBody,
  type DeliveryFilter,
  type DeliveryReplayed,
  type DeliveryView,
  type HookCreated,
  type HookView,
} from './hooks.schemas.js';
import type { Emit } from './outbox.repo.js';
import { presentCreatedHook, presentDelivery, presentHook } from './presenters.js';

export const HOOK_LIST_CACHE_SIZE = 1000;

/**
 * A workspace's hooks as GET /v1/hooks answers them: the views, oldest first, and their JSON text, written once per
 * list. The views hold exactly the schema's fields in its order (presentHook is typed by HookView), so the text is
 * byte for byte what the schema's serializer writes (hooks.routes.test.ts checks it); serialising per request cost
 * about 5 µs of the hottest read.
 */
export type HookList = { readonly views: readonly HookView[]; readonly json: string };

// Cached lists are shared by every request that reads them: frozen, so no caller can change another's answer.
const hookList = (hooks: Hook[]): HookList => {
  const views = Object.freeze(hooks.map((h) => Object.freeze(presentHook(h))));
  return Object.freeze({ views, json: JSON.stringify(views) });
};

/** Validates the event filter: known names only, at most MAX_HOOK_EVENTS distinct; duplicates collapse. */
export function validateEventFilter(events: string[]): string[] {
  const unique = [...new Set(events)];
  const unknown = unique.find((e) => !isEventName(e));
  if (unknown !== undefined) {
    throw apiError('invalid_request', {
      message: `Unknown event name "${unknown.slice(0, 100)}".`,
      meta: { field: 'events', value: unknown.slice(0, 100) },
    });
  }
  if (unique.length > MAX_HOOK_EVENTS) {
    throw apiError('invalid_request', {
      message: `At most ${MAX_HOOK_EVENTS} named events per hook; use an empty list for all events.`,
      meta: { field: 'events', max: MAX_HOOK_EVENTS },
    });
  }
  return unique;
}

/** The target in canonical form, or 400 invalid_request naming the outbound rule it breaks. */
export async function validateTargetUrl(raw: string, allowPrivateNetwork: boolean): Promise<string> {
  const r = await checkOutboundUrl(raw, { allowPrivateNetwork });
  if (!r.ok) {
    throw apiError('invalid_request', {
      message: `target_url refused: ${r.reason}.`,
      meta: { field: 'target_url', reason: r.reason },
    });
  }
  return r.url.toString();
}

/** The operator's audit row, when one acts (`actor`); the API's own calls write none. */
async function auditAs(trx: Kysely<Database>, actor: string | undefined, row: Omit<AuditRow, 'actor'>, now: number) {
  if (actor !== undefined) await recordAudit(trx, { ...row, actor }, now);
}

export type HooksDeps = {
  db: Db;
  clock: Clock;
  emit: Emit;
  allowPrivateNetwork: boolean;
  /** Nudges the delivery worker after an event was committed. */
  wakeDeliveries(): void;
  /** Secrets at rest: new hooks' secrets are stored encrypted under it; without it, plain. */
  keyring?: Keyring | null;
};

export type HooksService = ReturnType<typeof createHooksService>;

export function createHooksService(deps: HooksDeps) {
  const { db } = deps;
  const lists = createExactCache<string, HookList>({
    probe: db.probe,
    max: HOOK_LIST_CACHE_SIZE,
    load: async (workspaceId) => hookList(await listHooks(db.kysely, workspaceId)),
  });

  return {
    async create(workspaceId: string, body: CreateHookBody, actor?: string): Promise<HookCreated> {
      const events = validateEventFilter(body.events ?? []);
      const targetUrl = await validateTargetUrl(body.target_url, deps.allowPrivateNetwork);
      const now = deps.clock.now();
      return db.kysely.transaction().execute(async (trx) => {
        const hook = presentCreatedHook(
          await createHook(trx, { workspaceId, targetUrl, events, source: 'api' }, now, deps.keyring),
        );
        const detail = { target_url: hook.target_url, events: hook.events };
        await auditAs(trx, actor, { workspaceId, action: 'hook.created', targetId: hook.id, detail }, now);
        return hook;
      });
    },

    /**
     * The workspace's hooks, oldest first, never the secret. `version`: a change-probe reading already taken for this
     * request (`req.dataVersion`), taken after the request arrived, so the answer is never older than the request.
     */
    list: (workspaceId: string, version?: number | null) => lists.load(workspaceId, version),
    /** The list without touching the database, when it is cached and exact at `version`; else undefined. */
    cachedList: (workspaceId: string, version: number | null) => lists.get(workspaceId, version),

    /** Soft-deletes a live hook of the workspace; false when there is none. */
    remove: (workspaceId: string, id: string, actor?: string) =>
      db.kysely.transaction().execute(async (trx) => {
        const now = deps.clock.now();
        if (!(await deleteHook(trx, workspaceId, id, now))) return false;
        await auditAs(trx, actor, { workspaceId, action: 'hook.deleted', targetId: id }, now);
        return true;
      }),

    /** The synthetic test event to one hook of the workspace; undefined when there is no such hook. */
    async sendTest(
      workspaceId: string,
      hookId: string,
      actor?: string,
    ): Promise<{ event_id: string; hook_id: string } | undefined> {
      const hook = await findHook(db.kysely, workspaceId, hookId);
      if (!hook) return undefined;
      const { eventId } = await sendTestEvent(deps, workspaceId, hook.id, actor);
      return { event_id: eventId, hook_id: hook.id };
    },

    /** One page of a hook's delivery history (see listHookDeliveries); undefined when there is no such hook. */
    deliveries: (workspaceId: string, hookId: string, query: HistoryQuery = {}) =>
      listHookDeliveries(deps, workspaceId, hookId, query),

    /**
     * Replays one of the hook's deliveries (see replayDelivery); undefined when there is no such live hook or
     * delivery of it in the workspace.
     */
    replay: (workspaceId: string, hookId: string, deliveryId: string, actor?: string) =>
      replayDelivery(deps, deliveryId, { workspaceId, hookId }, actor),
  };
}

/** Emits the spec's synthetic test event to one hook; shared by the API, the dashboard and `signet hooks test`. */
export async function sendTestEvent(
  deps: Pick<HooksDeps, 'db' | 'clock' | 'emit' | 'wakeDeliveries'>,
  workspaceId: string,
  hookId: string,
  actor?: string,
) {
  const r = await deps.db.kysely.transaction().execute(async (trx) => {
    const only = { onlyHookId: hookId, documentId: null };
    const sent = await deps.emit(trx, 'signing_request.sent', workspaceId, testEventFields(), only);
    const detail = { event_id: sent.eventId };
    await auditAs(trx, actor, { workspaceId, action: 'hook.test_sent', targetId: hookId, detail }, deps.clock.now());
    return sent;
  });
  deps.wakeDeliveries();
  return r;
}

/**
 * The states a history filter stands for (`failed`: retrying and giving_up); none for no filter. An unknown
 * value is 400 invalid_request with meta.field `status`.
 */
export function deliveryStatuses(filter: string | undefined): readonly DeliveryStatus[] | undefined {
  if (filter === undefined) return undefined;
  if (!(DELIVERY_FILTERS as readonly string[]).includes(filter)) {
    throw apiError('invalid_request', {
      message: `Unknown delivery status "${filter.slice(0, 40)}"; one of ${DELIVERY_FILTERS.join(', ')}.`,
      meta: { field: 'status', allowed: [...DELIVERY_FILTERS] },
    });
  }
  return filter === 'failed' ? ['retrying', 'giving_up'] : [filter as Exclude<DeliveryFilter, 'failed'>];
}

/**
 * What a history page may ask for, as a query string gives it: a state filter, the id of the previous page's last
 * delivery, a page size (1 to HISTORY_PAGE_SIZE).
 */
export type HistoryQuery = { status?: string; before?: string; limit?: string | number };
export const HISTORY_PAGE_SIZE = 100;

function pageSize(raw: string | number | undefined): number {
  if (raw === undefined) return HISTORY_PAGE_SIZE;
  const n = typeof raw === 'number' ? raw : /^[0-9]{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > HISTORY_PAGE_SIZE) {
    throw apiError('invalid_request', {
      message: `limit must be an integer from 1 to ${HISTORY_PAGE_SIZE}.`,
      meta: { field: 'limit', max: HISTORY_PAGE_SIZE },
    });
  }
  return n;
}

/**
 * One page of a hook's delivery history, newest first: every delivery with each attempt (time, response status,
 * latency, error) and its next attempt time. `next` is the `before` of the following page (null on the last page).
 * Undefined when the hook is not a live hook of the workspace; 400 invalid_request (meta.field) for an unknown
 * status, a limit outside 1 to 100, or a `before` that is not one of this hook's deliveries. The API route calls
 * this, and the dashboard can call it with the query values as they come.
 */
export async function listHookDeliveries(
  deps: Pick<HooksDeps, 'db'>,
  workspaceId: string,
  hookId: string,
  query: HistoryQuery = {},
): Promise<{ deliveries: DeliveryView[]; next: string | null } | undefined> {
  const statuses = deliveryStatuses(query.status);
  const limit = pageSize(query.limit);
  const hook = await findHook(deps.db.kysely, workspaceId, hookId);
  if (!hook) return undefined;
  let after: DeliveryQuery['after'];
  if (query.before !== undefined) {
    const row = await findDeliveryRow(deps.db, query.before);
    if (!row || row.workspace_id !== workspaceId || row.hook_id !== hook.id) {
      throw apiError('invalid_request', {
        message: "`before` must be the id of one of this hook's deliveries.",
        meta: { field: 'before' },
      });
    }
    after = row;
  }
  const rows = await findDeliveries(deps.db, { workspaceId, hookId: hook.id, statuses, after, limit: limit + 1 });
  const page = rows.slice(0, limit).map(presentDelivery);
  return { deliveries: page, next: rows.length > limit ? page.at(-1)!.id : null };
}

/** Newest first, across hooks (the CLI); limit defaults to 50, at most 500. */
export const listDeliveries = async (db: Db, opts: DeliveryQuery = {}): Promise<DeliveryView[]> =>
  (await findDeliveries(db, opts)).map(presentDelivery);

/** By id alone: callers scope it (workspace_id is in the view) before showing it. */
export async function getDelivery(db: Db, id: string): Promise<DeliveryView | undefined> {
  const d = await findDelivery(db, id);
  return d && presentDelivery(d);
}

/**
 * Replay, the one mechanism behind the API, the dashboard and `signet deliveries replay`: the delivery's event is
 * sent again to the same hook as a new `pending` delivery due now (same event id and body, so receivers deduplicate;
 * its own attempts and schedule), from any state of the source delivery, which is left untouched. The worker is
 * woken. Undefined (nothing written) when there is no such delivery, its hook is deleted (a deleted hook gets no
 * more deliveries), or, given `scope`, it is not a delivery of that workspace's hook.
 */
export async function replayDelivery(
  deps: Pick<HooksDeps, 'db' | 'clock' | 'wakeDeliveries'>,
  deliveryId: string,
  scope?: { workspaceId: string; hookId: string },
  actor?: string,
): Promise<DeliveryReplayed | undefined> {
  const now = deps.clock.now();
  const replayed = await deps.db.kysely.transaction().execute(async (trx) => {
    const r = await insertReplay(deps.db, trx, deliveryId, now, scope);
    if (!r) return undefined;
    const view = { delivery_id: r.id, event_id: r.eventId, hook_id: r.hookId };
    await auditAs(
      trx,
      actor,
      { workspaceId: r.workspaceId, action: 'delivery.replayed', targetId: deliveryId, detail: view },
      now,
    );
    return view;
  });
  if (replayed) deps.wakeDeliveries();
  return replayed;
}
