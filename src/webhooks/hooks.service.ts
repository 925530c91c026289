// Webhook subscriptions as the API, the CLI and signing use them, and the delivery history. Guarantees: a hook is
// created only with a target that passes the outbound rule and a filter of known event names (at most
// MAX_HOOK_EVENTS); a list answer is never stale (on SQLite it is cached only while the change probe shows the
// database unchanged, since GET /v1/hooks is the API's hottest read).
import type { Db } from '../db/db.js';
import { createExactCache } from '../db/exact-cache.js';
import type { Clock } from '../lib/clock.js';
import { apiError } from '../lib/errors.js';
import { checkOutboundUrl } from '../lib/outbound.js';
import { MAX_HOOK_EVENTS } from '../limits.js';
import { findDeliveries, findDelivery, insertReplay } from './deliveries.repo.js';
import { isEventName, testEventFields } from './events.js';
import { createHook, deleteHook, findHook, listHooks, type Hook } from './hooks.repo.js';
import type { CreateHookBody, HookCreated, HookView } from './hooks.schemas.js';
import type { Emit } from './outbox.repo.js';
import { presentCreatedHook, presentDelivery, presentHook, type DeliveryView } from './presenters.js';

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

export type HooksDeps = {
  db: Db;
  clock: Clock;
  emit: Emit;
  allowPrivateNetwork: boolean;
  /** Nudges the delivery worker after an event was committed. */
  wakeDeliveries(): void;
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
    async create(workspaceId: string, body: CreateHookBody): Promise<HookCreated> {
      const events = validateEventFilter(body.events ?? []);
      const targetUrl = await validateTargetUrl(body.target_url, deps.allowPrivateNetwork);
      const hook = await createHook(db.kysely, { workspaceId, targetUrl, events, source: 'api' }, deps.clock.now());
      return presentCreatedHook(hook);
    },

    /**
     * The workspace's hooks, oldest first, never the secret. `version`: a change-probe reading already taken for this
     * request (`req.dataVersion`), taken after the request arrived, so the answer is never older than the request.
     */
    list: (workspaceId: string, version?: number | null) => lists.load(workspaceId, version),
    /** The list without touching the database, when it is cached and exact at `version`; else undefined. */
    cachedList: (workspaceId: string, version: number | null) => lists.get(workspaceId, version),

    remove: (workspaceId: string, id: string) => deleteHook(db.kysely, workspaceId, id, deps.clock.now()),

    /** The synthetic test event to one hook of the workspace; undefined when there is no such hook. */
    async sendTest(workspaceId: string, hookId: string): Promise<{ event_id: string; hook_id: string } | undefined> {
      const hook = await findHook(db.kysely, workspaceId, hookId);
      if (!hook) return undefined;
      const { eventId } = await sendTestEvent(deps, workspaceId, hook.id);
      return { event_id: eventId, hook_id: hook.id };
    },

    /** A hook's last 100 deliveries, newest first; undefined when there is no such hook. */
    async deliveries(workspaceId: string, hookId: string): Promise<DeliveryView[] | undefined> {
      const hook = await findHook(db.kysely, workspaceId, hookId);
      if (!hook) return undefined;
      return listDeliveries(db, { workspaceId, hookId: hook.id, limit: 100 });
    },
  };
}

/** Emits the spec's synthetic test event to one hook; shared by the API and `signet hooks test`. */
export async function sendTestEvent(
  deps: Pick<HooksDeps, 'db' | 'emit' | 'wakeDeliveries'>,
  workspaceId: string,
  hookId: string,
) {
  const r = await deps.db.kysely
    .transaction()
    .execute((trx) =>
      deps.emit(trx, 'signing_request.sent', workspaceId, testEventFields(), { onlyHookId: hookId, documentId: null }),
    );
  deps.wakeDeliveries();
  return r;
}

/** Newest first; limit defaults to 50, at most 500. */
export const listDeliveries = async (
  db: Db,
  opts: Parameters<typeof findDeliveries>[1] = {},
): Promise<DeliveryView[]> => (await findDeliveries(db, opts)).map(presentDelivery);

/** By id alone: callers scope it (workspace_id is in the view) before showing it. */
export async function getDelivery(db: Db, id: string): Promise<DeliveryView | undefined> {
  const d = await findDelivery(db, id);
  return d && presentDelivery(d);
}

/** Sends the event again to the same hook as a new delivery due now; the event id stays, so receivers dedupe. */
export async function replayDelivery(db: Db, id: string, clock: Clock): Promise<DeliveryView | undefined> {
  const fresh = await insertReplay(db, id, clock.now());
  return fresh === undefined ? undefined : getDelivery(db, fresh);
}
